/** The inbox page's stylesheet (inline: the page loads no external assets). */
export const INBOX_CSS = `
:root {
  --bg: #f6f7f9; --panel: #ffffff; --text: #1d2330; --muted: #667085; --line: #e3e6ec;
  --accent: #3b5bdb; --accent-soft: #e8edff; --ok: #2b8a3e; --ok-soft: #e6f4ea; --bad: #c92a2a;
  --bad-soft: #fdecec; --warn: #b06000; --warn-soft: #fff4e0; --chosen: #3b5bdb; --code: #f1f3f5;
  --radius: 10px; --shadow: 0 1px 2px rgba(16,24,40,.06), 0 1px 3px rgba(16,24,40,.08);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111418; --panel: #1a1e24; --text: #e6e8eb; --muted: #98a2b3; --line: #2b313a;
    --accent: #7b93ff; --accent-soft: #232b45; --ok: #69db7c; --ok-soft: #1d3325; --bad: #ff8787;
    --bad-soft: #3b1f22; --warn: #ffc078; --warn-soft: #3a2c17; --chosen: #7b93ff; --code: #242a32;
    --shadow: none;
  }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
header.top { position: sticky; top: 0; z-index: 2; display: flex; gap: 8px 16px; align-items: center; justify-content: space-between;
  padding: 12px clamp(12px, 4vw, 24px); background: var(--panel); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; font-size: 17px; letter-spacing: -.01em; display: flex; align-items: center; gap: 8px; white-space: nowrap; }
.brand .dot { width: 9px; height: 9px; border-radius: 50%; background: var(--muted); display: inline-block; }
.brand .dot.live { background: var(--ok); }
.me { display: flex; align-items: center; gap: 8px; color: var(--muted); font-size: 14px; min-width: 0; white-space: nowrap; }
.me input { width: 180px; min-width: 0; flex: 0 1 180px; }
/* A phone (390 px): the name box shrinks instead of pushing the header wider than the screen. */
@media (max-width: 480px) { .me .long { display: none; } .brand { font-size: 16px; } }
main { max-width: 860px; margin: 0 auto; padding: 20px 16px 60px; }
h2.section { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 24px 4px 10px; }
.empty { color: var(--muted); padding: 28px; text-align: center; border: 1px dashed var(--line); border-radius: var(--radius); background: var(--panel); }
.empty code { background: var(--code); padding: 2px 6px; border-radius: 5px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); margin: 0 0 14px; overflow: hidden; }
.card.settled { opacity: .92; }
.fyi-text { white-space: pre-wrap; }
.card-head { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 10px 16px; border-bottom: 1px solid var(--line); font-size: 13px; color: var(--muted); }
.card-head .grow { flex: 1; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; background: var(--accent-soft); color: var(--accent); }
.badge.approval { background: var(--warn-soft); color: var(--warn); }
.badge.plan-review { background: var(--accent-soft); color: var(--accent); }
.badge.status-answered { background: var(--ok-soft); color: var(--ok); }
.badge.status-cancelled, .badge.status-elsewhere { background: var(--code); color: var(--muted); }
.badge.status-continued { background: var(--warn-soft); color: var(--warn); }
.badge.status-declined { background: var(--bad-soft); color: var(--bad); }
.countdown { font-variant-numeric: tabular-nums; font-weight: 600; color: var(--warn); }
.card-body { padding: 14px 16px 16px; }
.q { padding: 10px 0 12px; }
.q + .q { border-top: 1px dashed var(--line); }
.q-header { font-size: 12px; font-weight: 700; text-transform: uppercase; letter-spacing: .05em; color: var(--accent); margin-bottom: 2px; }
.q-text { font-size: 16px; font-weight: 600; margin: 0 0 6px; white-space: pre-wrap; word-break: break-word; }
.detail { color: var(--text); font-size: 14px; background: var(--bg); border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; margin: 6px 0 10px; max-height: 420px; overflow: auto; word-break: break-word; }
.detail h3, .detail h4, .detail h5, .detail h6 { margin: 10px 0 4px; }
.detail p { margin: 6px 0; }
.detail pre { background: var(--code); padding: 8px 10px; border-radius: 6px; overflow: auto; }
.detail code { background: var(--code); padding: 1px 4px; border-radius: 4px; font-size: 13px; }
.detail pre code { padding: 0; background: none; }
.detail blockquote { margin: 6px 0; padding-left: 10px; border-left: 3px solid var(--line); color: var(--muted); }
.detail a { color: var(--accent); }
.detail table { border-collapse: collapse; margin: 6px 0; display: block; overflow-x: auto; }
.detail th, .detail td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; }
.detail ul, .detail ol { margin: 4px 0; padding-left: 22px; }
.detail li > p { margin: 2px 0; }
.options { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; }
button, input, textarea { font: inherit; color: inherit; }
button { cursor: pointer; border: 1px solid var(--line); background: var(--panel); border-radius: 8px; padding: 7px 14px; transition: background .12s, border-color .12s; }
button:hover:not(:disabled) { border-color: var(--accent); }
button:disabled { cursor: default; opacity: .55; }
button.opt { text-align: left; }
button.opt .desc { display: block; font-size: 12px; color: var(--muted); font-weight: 400; }
button.opt.chosen { background: var(--accent-soft); border-color: var(--chosen); color: var(--chosen); font-weight: 600; }
button.opt.multi::before { content: "\\2610  "; }
button.opt.multi.chosen::before { content: "\\2611  "; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; font-weight: 600; }
button.approve { background: var(--ok); border-color: var(--ok); color: #fff; font-weight: 600; }
button.reject { background: var(--bad-soft); border-color: var(--bad); color: var(--bad); font-weight: 600; }
button.link { border: 0; background: none; color: var(--muted); padding: 4px 6px; text-decoration: underline; }
input[type=text], textarea { border: 1px solid var(--line); background: var(--bg); border-radius: 8px; padding: 7px 10px; }
textarea { width: 100%; min-height: 70px; resize: vertical; }
.other { display: flex; gap: 8px; align-items: center; margin-top: 6px; }
.other input { flex: 1; min-width: 0; }
.draft-note { font-size: 12px; color: var(--muted); margin-top: 4px; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-top: 12px; }
.actions .grow { flex: 1; }
.notice { margin: 10px 0 0; padding: 8px 12px; border-radius: 8px; font-size: 14px; }
.notice.bad { background: var(--bad-soft); color: var(--bad); }
.notice.info { background: var(--accent-soft); color: var(--accent); }
.result { margin: 2px 0 4px; font-size: 15px; }
.result .answer { display: inline-block; padding: 2px 10px; border-radius: 6px; background: var(--ok-soft); color: var(--ok); font-weight: 600; }
.card.settled .q-text { font-size: 14px; margin-bottom: 4px; }
.card.settled .card-body { padding-top: 6px; }
details summary { cursor: pointer; color: var(--muted); font-size: 13px; margin-top: 4px; }
.result .answer.declined { background: var(--bad-soft); color: var(--bad); }
.result .skipped { color: var(--muted); font-style: italic; }
.continued-note { font-size: 13px; background: var(--warn-soft); color: var(--warn); padding: 6px 10px; border-radius: 8px; margin-bottom: 8px; }
.subject { font-size: 13px; color: var(--muted); margin-bottom: 2px; }
.subject b { color: var(--text); }
.quorum { font-size: 13px; color: var(--muted); }
.decline-box { margin-top: 10px; }
`
