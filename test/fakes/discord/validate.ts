/**
 * Payload checks of the fake Discord: every documented limit (docs/platform-limits.md#messages-components-and-modals) that
 * Discord enforces with 400 Invalid Form Body. Kept apart from the adapter's own limit table on
 * purpose, so a wrong limit in the renderer is caught here.
 */

export interface Violation {
  path: (string | number)[]
  code: string
  message: string
}

type Json = Record<string, unknown>

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

class Checker {
  readonly violations: Violation[] = []

  add(path: (string | number)[], code: string, message: string) {
    this.violations.push({ path, code, message })
  }

  str(value: unknown, path: (string | number)[], opts: { min?: number; max: number; required?: boolean }) {
    if (value === undefined || value === null) {
      if (opts.required) this.add(path, 'BASE_TYPE_REQUIRED', 'This field is required')
      return
    }
    if (typeof value !== 'string') return this.add(path, 'STRING_TYPE_CONVERT', 'Must be a string.')
    if (value.length > opts.max)
      this.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${opts.max} or fewer in length.`)
    if (opts.min !== undefined && value.length < opts.min)
      this.add(path, 'BASE_TYPE_BAD_LENGTH', `Must be between ${opts.min} and ${opts.max} in length.`)
  }

  int(value: unknown, path: (string | number)[], min: number, max: number) {
    if (value === undefined) return
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      this.add(path, 'NUMBER_TYPE_MAX', `int value should be between ${min} and ${max}.`)
  }
}

/** Discord's error body for violations. */
export function formBodyError(violations: Violation[]): Json {
  const errors: Json = {}
  for (const v of violations) {
    let node = errors
    for (const key of v.path.map(String)) {
      if (!isObj(node[key])) node[key] = {}
      node = node[key] as Json
    }
    const list = (node._errors as unknown[] | undefined) ?? []
    list.push({ code: v.code, message: v.message })
    node._errors = list
  }
  return { code: 50035, errors, message: 'Invalid Form Body' }
}

const BUTTON_STYLES = new Set([1, 2, 3, 4, 5, 6])

function checkEmbeds(c: Checker, embeds: unknown) {
  if (embeds === undefined) return
  if (!Array.isArray(embeds)) return c.add(['embeds'], 'LIST_TYPE_CONVERT', 'Must be an array.')
  if (embeds.length > 10) c.add(['embeds'], 'BASE_TYPE_MAX_LENGTH', 'Must be 10 or fewer in length.')
  let total = 0
  for (const [i, embed] of embeds.entries()) {
    if (!isObj(embed)) {
      c.add(['embeds', i], 'DICT_TYPE_CONVERT', 'Only dictionaries may be used.')
      continue
    }
    const p = ['embeds', i]
    c.str(embed.title, [...p, 'title'], { max: 256 })
    c.str(embed.description, [...p, 'description'], { min: 1, max: 4096 })
    total += String(embed.title ?? '').length + String(embed.description ?? '').length
    if (isObj(embed.author)) {
      c.str(embed.author.name, [...p, 'author', 'name'], { min: 1, max: 256, required: true })
      total += String(embed.author.name ?? '').length
      c.str(embed.author.icon_url, [...p, 'author', 'icon_url'], { max: 2048 })
    }
    if (isObj(embed.footer)) {
      c.str(embed.footer.text, [...p, 'footer', 'text'], { min: 1, max: 2048, required: true })
      total += String(embed.footer.text ?? '').length
    }
    if (embed.fields !== undefined) {
      const fields = Array.isArray(embed.fields) ? embed.fields : []
      if (fields.length > 25)
        c.add([...p, 'fields'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.')
      fields.forEach((f: unknown, j: number) => {
        const field = isObj(f) ? f : {}
        c.str(field.name, [...p, 'fields', j, 'name'], { min: 1, max: 256, required: true })
        c.str(field.value, [...p, 'fields', j, 'value'], { min: 1, max: 1024, required: true })
        total += String(field.name ?? '').length + String(field.value ?? '').length
      })
    }
  }
  if (total > 6000) c.add(['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000')
}

function checkComponents(c: Checker, rows: unknown, ids: Set<string>) {
  if (rows === undefined) return
  if (!Array.isArray(rows)) return c.add(['components'], 'LIST_TYPE_CONVERT', 'Must be an array.')
  if (rows.length > 5) c.add(['components'], 'BASE_TYPE_MAX_LENGTH', 'Must be 5 or fewer in length.')
  for (const [i, row] of rows.entries()) {
    const p = ['components', i]
    if (!isObj(row) || row.type !== 1) {
      c.add(p, 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (1,).')
      continue
    }
    const inner = Array.isArray(row.components) ? row.components : []
    if (inner.length < 1 || inner.length > 5)
      c.add([...p, 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 5 in length.')
    const selects = inner.filter((x) => isObj(x) && x.type === 3).length
    if (selects > 0 && inner.length > 1)
      c.add(
        [...p, 'components'],
        'COMPONENT_LAYOUT_WIDTH_EXCEEDED',
        'The specified component exceeds the maximum width',
      )
    for (const [j, component] of inner.entries()) {
      const q = [...p, 'components', j]
      if (!isObj(component)) {
        c.add(q, 'DICT_TYPE_CONVERT', 'Only dictionaries may be used.')
        continue
      }
      if (component.type === 2) {
        if (!BUTTON_STYLES.has(component.style as number))
          c.add([...q, 'style'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2, 3, 4, 5, 6}.')
        c.str(component.label, [...q, 'label'], { max: 80 })
        if (component.style === 5) c.str(component.url, [...q, 'url'], { max: 512, required: true })
        else checkCustomId(c, component.custom_id, [...q, 'custom_id'], ids)
      } else if (component.type === 3) {
        checkCustomId(c, component.custom_id, [...q, 'custom_id'], ids)
        c.str(component.placeholder, [...q, 'placeholder'], { max: 150 })
        const options = Array.isArray(component.options) ? component.options : []
        if (options.length < 1 || options.length > 25)
          c.add([...q, 'options'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 25 in length.')
        c.int(component.min_values, [...q, 'min_values'], 0, 25)
        c.int(component.max_values, [...q, 'max_values'], 1, 25)
        const min = (component.min_values as number | undefined) ?? 1
        const max = (component.max_values as number | undefined) ?? 1
        if (max > options.length || min > max)
          c.add(
            [...q, 'max_values'],
            'SELECT_COMPONENT_OPTION_VALUE_COUNT_INVALID',
            'Invalid min/max values.',
          )
        const values = new Set<string>()
        let defaults = 0
        options.forEach((o: unknown, k: number) => {
          const option = isObj(o) ? o : {}
          const r = [...q, 'options', k]
          c.str(option.label, [...r, 'label'], { min: 1, max: 100, required: true })
          c.str(option.value, [...r, 'value'], { min: 1, max: 100, required: true })
          c.str(option.description, [...r, 'description'], { max: 100 })
          if (values.has(String(option.value)))
            c.add([...r, 'value'], 'SELECT_COMPONENT_OPTION_VALUE_DUPLICATED', 'Duplicate option value.')
          values.add(String(option.value))
          if (option.default) defaults++
        })
        if (defaults > max)
          c.add([...q, 'options'], 'SELECT_COMPONENT_TOO_MANY_DEFAULTS', 'Too many default options.')
      } else {
        c.add([...q, 'type'], 'UNION_TYPE_CHOICES', 'Not a legacy message component.')
      }
    }
  }
}

function checkCustomId(c: Checker, id: unknown, path: (string | number)[], ids: Set<string>) {
  c.str(id, path, { min: 1, max: 100, required: true })
  if (typeof id !== 'string') return
  if (ids.has(id)) c.add(path, 'COMPONENT_CUSTOM_ID_DUPLICATED', 'Component custom id cannot be duplicated')
  ids.add(id)
}

export interface MessageCheckOptions {
  /** PATCH: absent fields keep their value, so emptiness is not checked. */
  partial?: boolean
  /** Test policy, stricter than Discord: every message must carry `allowed_mentions.parse: []`. */
  strictMentions?: boolean
}

/** Check a message body (create, edit, webhook, interaction response data). */
export function validateMessage(body: unknown, options: MessageCheckOptions = {}): Violation[] {
  const c = new Checker()
  if (!isObj(body)) {
    c.add([], 'DICT_TYPE_CONVERT', 'Only dictionaries may be used.')
    return c.violations
  }
  c.str(body.content, ['content'], { max: 2000 })
  checkEmbeds(c, body.embeds)
  const flags = typeof body.flags === 'number' ? body.flags : 0
  if (flags & (1 << 15))
    c.add(['flags'], 'TEST_POLICY', 'askbridge uses legacy components, not Components V2')
  checkComponents(c, body.components, new Set())
  const am = body.allowed_mentions
  if (isObj(am)) {
    const parse = Array.isArray(am.parse) ? am.parse : []
    if (parse.includes('users') && Array.isArray(am.users))
      c.add(
        ['allowed_mentions'],
        'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
        'parse:[users] and users are exclusive',
      )
    if (parse.includes('roles') && Array.isArray(am.roles))
      c.add(
        ['allowed_mentions'],
        'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
        'parse:[roles] and roles are exclusive',
      )
    for (const key of ['users', 'roles'] as const)
      if (Array.isArray(am[key]) && (am[key] as unknown[]).length > 100)
        c.add(['allowed_mentions', key], 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.')
  }
  if (options.strictMentions && !(isObj(am) && Array.isArray(am.parse) && am.parse.length === 0))
    c.add(['allowed_mentions'], 'TEST_POLICY', 'every message must set allowed_mentions.parse to []')
  if (!options.partial) {
    const empty =
      !body.content &&
      !(Array.isArray(body.embeds) && body.embeds.length) &&
      !(Array.isArray(body.components) && body.components.length)
    if (empty) c.add([], 'EMPTY_MESSAGE', 'Cannot send an empty message')
  }
  return c.violations
}

/** Check a modal (interaction response type 9 `data`). */
export function validateModal(data: unknown): Violation[] {
  const c = new Checker()
  if (!isObj(data)) {
    c.add(['data'], 'DICT_TYPE_CONVERT', 'Only dictionaries may be used.')
    return c.violations
  }
  c.str(data.custom_id, ['data', 'custom_id'], { min: 1, max: 100, required: true })
  c.str(data.title, ['data', 'title'], { min: 1, max: 45, required: true })
  const components = Array.isArray(data.components) ? data.components : []
  if (components.length < 1 || components.length > 5)
    c.add(['data', 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 5 in length.')
  const ids = new Set<string>()
  const checkInput = (input: unknown, p: (string | number)[], legacyLabel: boolean): void => {
    if (!isObj(input) || input.type !== 4) {
      c.add(p, 'UNION_TYPE_CHOICES', 'Expected a text input.')
      return
    }
    checkCustomId(c, input.custom_id, [...p, 'custom_id'], ids)
    if (input.style !== 1 && input.style !== 2)
      c.add([...p, 'style'], 'BASE_TYPE_CHOICES', 'Value must be 1 or 2.')
    if (legacyLabel) c.str(input.label, [...p, 'label'], { min: 1, max: 45, required: true })
    c.int(input.min_length, [...p, 'min_length'], 0, 4000)
    c.int(input.max_length, [...p, 'max_length'], 1, 4000)
    c.str(input.placeholder, [...p, 'placeholder'], { max: 100 })
    c.str(input.value, [...p, 'value'], { max: 4000 })
  }
  for (const [i, component] of components.entries()) {
    const p = ['data', 'components', i]
    if (!isObj(component)) {
      c.add(p, 'DICT_TYPE_CONVERT', 'Only dictionaries may be used.')
      continue
    }
    if (component.type === 1) {
      const inner = Array.isArray(component.components) ? component.components : []
      if (inner.length !== 1) c.add([...p, 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be 1 in length.')
      for (const [j, input] of inner.entries()) checkInput(input, [...p, 'components', j], true)
    } else if (component.type === 18) {
      c.str(component.label, [...p, 'label'], { min: 1, max: 45, required: true })
      c.str(component.description, [...p, 'description'], { max: 100 })
      checkInput(component.component, [...p, 'component'], false)
      if (isObj(component.component) && component.component.label !== undefined)
        c.add(
          [...p, 'component', 'label'],
          'TEXT_INPUT_LABEL_IN_LABEL',
          'A text input in a Label has no label.',
        )
    } else if (component.type === 10) {
      c.str(component.content, [...p, 'content'], { min: 1, max: 4000, required: true })
    } else c.add([...p, 'type'], 'UNION_TYPE_CHOICES', 'Not a modal component.')
  }
  return c.violations
}
