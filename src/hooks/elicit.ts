/**
 * MCP elicitation forms as question batches, and answers back as typed `content`.
 *
 * The MCP specification restricts `requestedSchema` to a flat object whose properties are
 * primitives: string (title, description, minLength, maxLength, format email | uri | date |
 * date-time, default), number / integer (minimum, maximum, default), boolean (default), and
 * enums: `enum` (optionally `enumNames`), titled `oneOf: [{const, title}]`, and multi-select
 * arrays `items: {enum}` or `items: {anyOf: [{const, title}]}` with minItems / maxItems.
 * Source: https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation#requested-schema
 * askbridge also checks `pattern` when a server sends one. Anything else is refused by name.
 */

import { BOOLEAN_LABELS, checkFieldArray, checkFieldText, optionValue } from '../card/fields.js'
import type { FieldRule } from '../protocol/form.js'
import { LIMITS } from '../protocol/schemas.js'
import type { AskUserQuestionAnswerItem, AskUserQuestionItem } from '../protocol/types.js'
import { HookError } from './errors.js'
import type { ElicitContent } from './schemas.js'

/** The id of the question that sends or declines the form. */
export const RESPOND_ID = 'askbridge:respond'
export const RESPOND = { send: 'Send', decline: 'Decline' } as const

/** A form as askbridge asks it. */
export interface ElicitationForm {
  questions: AskUserQuestionItem[]
  fields: Record<string, FieldRule>
  /** Pre-selected answers (schema defaults), by question id. */
  defaults: Record<string, { selected: string[]; custom?: string }>
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time'])
const KNOWN: Record<string, Set<string>> = {
  string: new Set([
    'type',
    'title',
    'description',
    'minLength',
    'maxLength',
    'format',
    'pattern',
    'default',
    'enum',
    'enumNames',
    'oneOf',
  ]),
  number: new Set(['type', 'title', 'description', 'minimum', 'maximum', 'default']),
  boolean: new Set(['type', 'title', 'description', 'default']),
  array: new Set(['type', 'title', 'description', 'items', 'minItems', 'maxItems', 'default']),
}

function unsupported(path: string, what: string): HookError {
  return new HookError('UNSUPPORTED_SCHEMA', `requestedSchema ${path}: ${what} is not supported`)
}

/** Every `$ref` anywhere in the schema, named by path. */
function findRef(value: unknown, path: string): string | undefined {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = findRef(v, `${path}[${i}]`)
      if (found) return found
    }
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref') return path || '(root)'
      const found = findRef(v, path ? `${path}.${k}` : k)
      if (found) return found
    }
  }
  return undefined
}

/** Titled choices `[{const, title}]` -> labels and the label -> value map. */
function titledChoices(list: unknown, path: string): { labels: string[]; values: Record<string, string> } {
  if (!Array.isArray(list) || list.length === 0) throw unsupported(path, 'an empty or malformed choice list')
  const labels: string[] = []
  const values: Record<string, string> = {}
  for (const [i, item] of list.entries()) {
    if (!isObject(item) || typeof item.const !== 'string') {
      throw unsupported(`${path}[${i}]`, 'a choice without a string "const"')
    }
    const base = typeof item.title === 'string' && item.title.trim() ? item.title.trim() : item.const
    // Labels are the answer values on the wire: keep them distinct even when titles repeat.
    const label = labels.includes(base) ? `${base} (${item.const})` : base
    labels.push(label)
    values[label] = item.const
  }
  return { labels, values }
}

function enumChoices(schema: Json, path: string): { labels: string[]; values: Record<string, string> } {
  const list = schema.enum
  if (!Array.isArray(list) || list.length === 0 || !list.every((v) => typeof v === 'string')) {
    throw unsupported(`${path}.enum`, 'an enum that is not a non-empty list of strings')
  }
  const names = Array.isArray(schema.enumNames) ? schema.enumNames : undefined
  return titledChoices(
    list.map((v, i) => ({ const: v, ...(typeof names?.[i] === 'string' ? { title: names[i] } : {}) })),
    `${path}.enum`,
  )
}

function checkKeys(schema: Json, kind: keyof typeof KNOWN, path: string): void {
  for (const key of Object.keys(schema)) {
    if (!KNOWN[kind]?.has(key)) throw unsupported(`${path}.${key}`, `the keyword "${key}"`)
  }
}

/** The root of a `requestedSchema`: a flat object of properties; returns them and the required names. */
function rootProperties(requestedSchema: unknown): { properties: Json; required: unknown[] } {
  if (!isObject(requestedSchema)) throw unsupported('(root)', 'a schema that is not an object')
  const ref = findRef(requestedSchema, '')
  if (ref) throw unsupported(ref, '"$ref"')
  if (requestedSchema.type !== 'object')
    throw unsupported('type', `type ${JSON.stringify(requestedSchema.type)} (only "object")`)
  for (const key of Object.keys(requestedSchema)) {
    if (!['type', 'properties', 'required', 'title', 'description', '$schema'].includes(key)) {
      throw unsupported(key, `the keyword "${key}"`)
    }
  }
  const properties = requestedSchema.properties ?? {}
  if (!isObject(properties)) throw unsupported('properties', 'properties that are not an object')
  const required = Array.isArray(requestedSchema.required) ? requestedSchema.required : []
  const names = Object.keys(properties)
  if (names.length > LIMITS.questionsPerBatch) {
    throw unsupported('properties', `a form of ${names.length} fields (at most ${LIMITS.questionsPerBatch})`)
  }
  if (names.includes(RESPOND_ID)) throw unsupported(`properties.${RESPOND_ID}`, 'this property name')
  return { properties, required }
}

/** One property's rule and, for choices, its option labels. */
function fieldRule(
  schema: Json,
  path: string,
  required: boolean,
): { rule: FieldRule; options?: string[]; multi?: true } {
  const type = schema.type
  if (type === 'string' && (schema.enum !== undefined || schema.oneOf !== undefined)) {
    checkKeys(schema, 'string', path)
    const choices =
      schema.oneOf !== undefined ? titledChoices(schema.oneOf, `${path}.oneOf`) : enumChoices(schema, path)
    return { options: choices.labels, rule: { kind: 'single', schema, required, values: choices.values } }
  }
  if (type === 'string') {
    checkKeys(schema, 'string', path)
    if (schema.format !== undefined && !STRING_FORMATS.has(String(schema.format))) {
      throw unsupported(`${path}.format`, `the format ${JSON.stringify(schema.format)}`)
    }
    return { rule: { kind: 'string', schema, required } }
  }
  if (type === 'number' || type === 'integer') {
    checkKeys(schema, 'number', path)
    return { rule: { kind: type, schema, required } }
  }
  if (type === 'boolean') {
    checkKeys(schema, 'boolean', path)
    return { options: [BOOLEAN_LABELS.yes, BOOLEAN_LABELS.no], rule: { kind: 'boolean', schema, required } }
  }
  if (type === 'array') {
    checkKeys(schema, 'array', path)
    const items = schema.items
    if (!isObject(items)) throw unsupported(`${path}.items`, 'an array without item choices')
    let choices: { labels: string[]; values: Record<string, string> }
    if (items.anyOf !== undefined) choices = titledChoices(items.anyOf, `${path}.items.anyOf`)
    else if (items.type === 'string' && items.enum !== undefined)
      choices = enumChoices(items, `${path}.items`)
    else throw unsupported(`${path}.items`, 'an array whose items are not enum or anyOf choices')
    return {
      options: choices.labels,
      multi: true,
      rule: { kind: 'multi', schema, required, values: choices.values },
    }
  }
  throw unsupported(`${path}.type`, `type ${JSON.stringify(type)}`)
}

/** One property as a question (its name the id, its title and description the text), with its rule and default. */
function formField(
  name: string,
  value: unknown,
  isRequired: boolean,
): { question: AskUserQuestionItem; rule: FieldRule; preset: ReturnType<typeof defaultAnswer> } {
  const path = `properties.${name}`
  if (!isObject(value)) throw unsupported(path, 'a property that is not a schema object')
  const schema = value
  if (schema.type === 'object') throw unsupported(path, 'a nested object')
  const title = typeof schema.title === 'string' && schema.title.trim() ? schema.title.trim() : name
  const description = typeof schema.description === 'string' ? schema.description : undefined
  const { rule, options, multi } = fieldRule(schema, path, isRequired)
  const question: AskUserQuestionItem = {
    id: name,
    question: isRequired ? title : `${title} (optional)`,
    ...(description ? { detail: description } : {}),
    ...(options ? { options: options.map((label) => ({ label })) } : {}),
    ...(multi ? { multiSelect: true } : {}),
  }
  rule.title = title
  return { question, rule, preset: defaultAnswer(rule, schema.default, options) }
}

/**
 * Turn a `requestedSchema` into questions: one per property (its name is the question id, its
 * title and description the text); the card's Submit and Decline send or refuse it. A form
 * without fields is one "Send / Decline" question. Throws
 * UNSUPPORTED_SCHEMA naming the first construct askbridge cannot render.
 */
export function elicitationForm(requestedSchema: unknown, message: string, source?: string): ElicitationForm {
  const { properties, required } = rootProperties(requestedSchema)
  const questions: AskUserQuestionItem[] = []
  const fields: Record<string, FieldRule> = {}
  const defaults: ElicitationForm['defaults'] = {}
  const intro = `${source ? `**${source}** asks: ` : ''}${message}`

  for (const name of Object.keys(properties)) {
    const { question, rule, preset } = formField(name, properties[name], required.includes(name))
    questions.push(question)
    fields[name] = rule
    if (preset) defaults[name] = preset
  }

  if (questions.length === 0) {
    // A form without fields is a yes or no: one click sends it, one click declines it.
    questions.push({
      id: RESPOND_ID,
      header: 'Form',
      question: 'Send this form?',
      detail: intro,
      options: [{ label: RESPOND.send }, { label: RESPOND.decline }],
    })
    fields[RESPOND_ID] = { kind: 'decision', schema: {}, required: true, decline: RESPOND.decline }
    return { questions, fields, defaults }
  }
  // The first question carries the server's message too, so a reader sees it first. The card's
  // own Submit sends the form and its Decline refuses it (nothing is sent).
  const first = questions[0] as AskUserQuestionItem
  questions[0] = { ...first, detail: first.detail ? `${intro}\n\n${first.detail}` : intro }
  return { questions, fields, defaults }
}

function defaultAnswer(
  rule: FieldRule,
  value: unknown,
  options: string[] | undefined,
): { selected: string[]; custom?: string } | undefined {
  if (value === undefined) return undefined
  const labelOf = (v: unknown) => options?.find((l) => optionValue(rule, l) === v)
  switch (rule.kind) {
    case 'boolean':
      return typeof value === 'boolean'
        ? { selected: [value ? BOOLEAN_LABELS.yes : BOOLEAN_LABELS.no] }
        : undefined
    case 'single': {
      const label = labelOf(value)
      return label ? { selected: [label] } : undefined
    }
    case 'multi': {
      if (!Array.isArray(value)) return undefined
      const labels = value.map(labelOf).filter((l): l is string => l !== undefined)
      return labels.length ? { selected: labels } : undefined
    }
    default:
      return typeof value === 'string' || typeof value === 'number'
        ? { selected: [], custom: String(value) }
        : undefined
  }
}

/**
 * Whether the answered form was declined: its Decline leaves every field unanswered (Submit
 * needs at least one answer), and a form without fields answers its Send / Decline question.
 */
export function isDeclined(answers: AskUserQuestionAnswerItem[]): boolean {
  const respond = answers.find((a) => a.id === RESPOND_ID)
  if (respond) return respond.selected.includes(RESPOND.decline)
  return answers.every((a) => a.selected.length === 0 && a.custom === undefined)
}

/**
 * The typed `content` of an answered form: select labels become their values, booleans true or
 * false, free text a number or string checked against the schema; skipped optional fields are
 * left out. Throws BAD_ANSWER-like HookErrors only for answers the card could not have accepted.
 */
export function elicitationContent(
  form: Pick<ElicitationForm, 'fields'>,
  answers: AskUserQuestionAnswerItem[],
): ElicitContent {
  const content: ElicitContent = {}
  for (const [id, rule] of Object.entries(form.fields)) {
    if (rule.kind === 'decision') continue
    const item = answers.find((a) => a.id === id)
    if (!item || (item.selected.length === 0 && item.custom === undefined)) {
      if (rule.required) throw new HookError('BAD_ANSWER', `the required field "${id}" has no answer`)
      continue
    }
    if (rule.kind === 'multi') {
      const values = item.selected.map((l) => String(optionValue(rule, l)))
      if (item.custom !== undefined) {
        const typed = checkFieldText(rule, item.custom)
        if (!typed.ok) throw new HookError('BAD_ANSWER', `${id} ${typed.message}`)
        values.push(String(typed.value))
      }
      const checked = checkFieldArray(rule, values)
      if (!checked.ok) throw new HookError('BAD_ANSWER', `${id}: ${checked.message}`)
      content[id] = values
      continue
    }
    if (item.custom !== undefined) {
      const typed = checkFieldText(rule, item.custom)
      if (!typed.ok) throw new HookError('BAD_ANSWER', `${id} ${typed.message}`)
      content[id] = typed.value
      continue
    }
    const label = item.selected[0] as string
    content[id] = optionValue(rule, label)
  }
  return content
}
