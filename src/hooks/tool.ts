/**
 * A tool call as a person reads it: the subject (the tool, and the MCP server of
 * `mcp__server__tool` names), a markdown detail (a Bash command in a code block with its
 * description, an Edit as a diff, a Write with its path and first lines, a WebFetch URL), and
 * the plain text routes match their `toolInput` pattern against.
 * Tool input fields: https://code.claude.com/docs/en/hooks#pretooluse-input
 */

/** The most of a tool input a card shows; the rest is counted, and shown whole in the inbox. */
export const TOOL_PREVIEW_CHARS = 3_000
/** Lines of a written file shown on the card. */
export const WRITE_PREVIEW_LINES = 20

export interface RenderedTool {
  /** For human recognition only, never an identity. */
  subject: string
  /** Markdown for the card's detail. */
  detail: string
  /** Plain text routes match against (the Bash command, the file path, the URL, or JSON). */
  text: string
}

type Input = Record<string, unknown>
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** `mcp__github__create_issue` -> server `github`, tool `create_issue`. */
export function mcpParts(toolName: string): { server: string; tool: string } | undefined {
  const m = /^mcp__(.+?)__(.+)$/.exec(toolName)
  return m ? { server: m[1] as string, tool: m[2] as string } : undefined
}

/** A fenced code block that its own content cannot close. */
export function codeBlock(text: string, language = ''): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = '`'.repeat(Math.max(3, longest + 1))
  return `${fence}${language}\n${text}\n${fence}`
}

/** Where the whole input of a call is shown: the inbox page `/inbox/tool/CALL_ID`. */
export function toolInputPath(callId: string): string {
  return `/inbox/tool/${encodeURIComponent(callId)}`
}

/**
 * How a card points to the whole input: a link when the bridge knows its public URL
 * (ASKBRIDGE_PUBLIC_URL), else the inbox path as text (never a link that cannot work).
 */
export interface WholeInput {
  callId: string
  publicUrl?: string | undefined
}

function pointer(whole: WholeInput | undefined): string {
  if (!whole) return 'the whole input is in the audit log (`askbridge audit --call`)'
  const path = toolInputPath(whole.callId)
  return whole.publicUrl
    ? `[full text in the inbox](${whole.publicUrl}${path})`
    : `full text in the inbox at \`${path}\``
}

/** At most `limit` characters, cut at a line end when one is near, and a note of what was left out. */
export function preview(
  text: string,
  limit = TOOL_PREVIEW_CHARS,
  whole?: WholeInput,
): { shown: string; note: string } {
  if (text.length <= limit) return { shown: text, note: '' }
  let cut = text.lastIndexOf('\n', limit)
  if (cut < limit * 0.6) cut = limit
  const rest = text.length - cut
  return {
    shown: text.slice(0, cut),
    note: `\n_… ${rest.toLocaleString('en-US')} more characters not shown; ${pointer(whole)}._`,
  }
}

const LANGUAGES: Record<string, string> = {
  ts: 'ts',
  tsx: 'tsx',
  js: 'js',
  mjs: 'js',
  json: 'json',
  py: 'python',
  sh: 'sh',
  md: 'markdown',
  yml: 'yaml',
  yaml: 'yaml',
  go: 'go',
  rs: 'rust',
  sql: 'sql',
}

function languageOf(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase()
  return (ext && LANGUAGES[ext]) ?? ''
}

/**
 * Render a tool call for a person. A card gets a preview that points to the whole input
 * (`whole`); `full` renders everything (the inbox's whole-input page).
 */
export function renderTool(
  toolName: string,
  input: Input,
  options: { whole?: WholeInput; full?: boolean } = {},
): RenderedTool {
  const limit = options.full ? Number.POSITIVE_INFINITY : TOOL_PREVIEW_CHARS
  const block = (text: string, language = ''): string => {
    const { shown, note } = preview(text, limit, options.whole)
    return `${codeBlock(shown, language)}${note}`
  }
  const writeLines = options.full ? Number.POSITIVE_INFINITY : WRITE_PREVIEW_LINES
  const mcp = mcpParts(toolName)
  const subject = mcp ? `${mcp.tool} (MCP server ${mcp.server})` : toolName
  const json = JSON.stringify(input, null, 2)
  const command = str(input.command)
  const path = str(input.file_path)
  const url = str(input.url)

  if (toolName === 'Bash' && command !== undefined) {
    const description = str(input.description)
    return {
      subject,
      detail: `${description ? `${description}\n\n` : ''}${block(command, 'sh')}`,
      text: command,
    }
  }
  if ((toolName === 'Edit' || toolName === 'MultiEdit') && path !== undefined) {
    const edits: Input[] = Array.isArray(input.edits)
      ? (input.edits.filter((e) => typeof e === 'object' && e !== null) as Input[])
      : [input]
    const diff = edits
      .map((e) => {
        const before = (str(e.old_string) ?? '').split('\n').map((l) => `- ${l}`)
        const after = (str(e.new_string) ?? '').split('\n').map((l) => `+ ${l}`)
        return [...before, ...after].join('\n')
      })
      .join('\n@@\n')
    const all = input.replace_all === true ? ' (every occurrence)' : ''
    return { subject, detail: `Edit \`${path}\`${all}\n\n${block(diff, 'diff')}`, text: path }
  }
  if (toolName === 'Write' && path !== undefined) {
    const content = str(input.content) ?? ''
    const lines = content.split('\n')
    const head = lines.slice(0, writeLines).join('\n')
    const more =
      lines.length > writeLines
        ? `\n_… ${lines.length - WRITE_PREVIEW_LINES} more lines (${lines.length} in all); ${pointer(options.whole)}._`
        : ''
    return {
      subject,
      detail: `Write \`${path}\` (${lines.length} ${lines.length === 1 ? 'line' : 'lines'})\n\n${block(head, languageOf(path))}${more}`,
      text: path,
    }
  }
  if (toolName === 'WebFetch' && url !== undefined) {
    const prompt = str(input.prompt)
    return {
      subject,
      detail: `Fetch <${url}>${prompt ? `\n\n${block(prompt)}` : ''}`,
      text: url,
    }
  }
  const lead = mcp ? `Tool \`${mcp.tool}\` of the MCP server \`${mcp.server}\`` : `Tool \`${toolName}\``
  return { subject, detail: `${lead}\n\n${block(json, 'json')}`, text: command ?? path ?? url ?? json }
}
