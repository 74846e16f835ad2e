// The bench runner: `npm run bench` builds, then runs every section below in order and writes ONE
// docs/benchmarks.md (machine, date, each section's figures, and every goal with its
// measured figure and PASS/FAIL). `npm run bench -- click burst` runs only the named sections and
// rewrites only their parts of the doc (the other sections' text and goal rows are kept).
//
// How a section plugs in: write bench/<name>.js whose default export is
//   async function (ctx) -> { markdown: string, goals: Array<{ goal, figure, pass }> }
// where ctx = { dir (a fresh temp directory, removed afterwards), log (progress to stderr) }.
// `markdown` is the section's body (no heading; the runner adds "## <name>", the date, the machine and
// how long the section took); `goals` become rows of the summary table (`figure` is a short string,
// `pass` a boolean). Then add the name to SECTIONS below, in the order the doc should show it.
// Measuring helpers (percentiles, tables, a concurrency pool) are in bench/lib.js; the platform fakes
// of test/fakes are compiled to dist-bench/ by `npm run bench` (tsconfig.bench.json).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { machine } from './lib.js'

const SECTIONS = [
  'click',
  'calls',
  'burst',
  'post',
  'history',
  'open-asks',
  'replicas',
  'capacity',
  'service',
]
const DOC = new URL('../docs/benchmarks.md', import.meta.url)

const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !SECTIONS.includes(name))
if (unknown.length > 0) {
  console.error(`unknown section(s): ${unknown.join(', ')}; sections: ${SECTIONS.join(', ')}`)
  process.exit(2)
}
// A section whose file has not landed yet is skipped, and says so.
const available = SECTIONS.filter((name) => existsSync(new URL(`./${name}.js`, import.meta.url)))
const toRun = wanted.length > 0 ? wanted : available

/** The previous doc's parts, so a partial run keeps the sections it did not run. */
function previous() {
  const parts = new Map()
  const rows = new Map()
  if (!existsSync(DOC)) return { parts, rows, full: undefined }
  const text = readFileSync(DOC, 'utf8')
  const full = /^The last full run \(every section\) took .*$/m.exec(text)?.[0]
  for (const m of text.matchAll(/<!-- bench:([\w-]+) -->\n([\s\S]*?)<!-- \/bench:\1 -->/g))
    parts.set(m[1], m[2])
  for (const line of text.split('\n')) {
    const m = /^\| ([\w-]+) \| /.exec(line)
    if (m && SECTIONS.includes(m[1])) rows.set(m[1], [...(rows.get(m[1]) ?? []), line])
  }
  return { parts, rows, full }
}

const { parts, rows, full } = previous()
/**
 * Write the doc from what has run so far: after every section, so a section that fails or hangs
 * later keeps the figures already measured.
 */
function writeDoc(done) {
  const fullRun =
    done && wanted.length === 0 && available.length === SECTIONS.length
      ? `The last full run (every section) took ${Math.round((performance.now() - runStarted) / 60_000)} min, ${new Date().toISOString().slice(0, 10)}.`
      : (full ?? 'No full run (every section) has been written yet.')
  const shown = SECTIONS.filter((name) => parts.has(name))
  const doc = `# Benchmarks

Written by \`npm run bench\` (bench/run.js runs the sections in bench/, each in one process run, one
after another). \`npm run bench -- <section> …\` reruns only the named sections and rewrites only
their parts below. Each section names its date, machine and duration; the figures and ratios that a
goal compares were measured in the same run. Last written ${new Date().toISOString().slice(0, 10)} on
${machine()}.
${fullRun}

## Goals

| section | goal | measured | result |
|---|---|---|---|
${shown.flatMap((name) => rows.get(name) ?? []).join('\n')}

${shown.map((name) => `## ${name}\n\n<!-- bench:${name} -->\n${parts.get(name)}<!-- /bench:${name} -->\n`).join('\n')}`
  writeFileSync(DOC, doc)
  console.error(`wrote docs/benchmarks.md (${shown.join(', ')})`)
}

const runStarted = performance.now()
for (const name of toRun) {
  if (!available.includes(name)) {
    console.error(`section ${name}: bench/${name}.js is missing`)
    process.exit(2)
  }
  const dir = mkdtempSync(join(tmpdir(), `askbridge-bench-${name}-`))
  const log = (msg) => console.error(`[${name}] ${msg}`)
  log('start')
  const started = performance.now()
  try {
    const { default: section } = await import(`./${name}.js`)
    const { markdown, goals } = await section({ dir, log })
    const seconds = (performance.now() - started) / 1000
    const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
    parts.set(
      name,
      `_Run ${when} UTC on ${machine()}; the section took ${Math.round(seconds)} s._\n\n${markdown.trim()}\n`,
    )
    rows.set(
      name,
      goals.map((g) => `| ${name} | ${g.goal} | ${g.figure} | ${g.pass ? 'PASS' : '**FAIL**'} |`),
    )
    log(`done in ${Math.round(seconds)} s`)
    writeDoc(name === toRun.at(-1))
    for (const g of goals) log(`${g.pass ? 'PASS' : 'FAIL'} ${g.goal}: ${g.figure}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
