/**
 * Form fields: checking a person's answer against askbridge's rules for a typed value (an MCP
 * elicitation property). The card keeps them beside the questions, so a person who types an
 * invalid value is refused at once, before the form completes, on every surface.
 */
import { createRequire } from 'node:module'
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv'
import type { FieldRule } from '../protocol/form.js'

export type FieldValue = string | number | boolean | string[]

export type FieldCheck = { ok: true; value: FieldValue } | { ok: false; message: string }

const YES = new Set(['yes', 'y', 'true'])
const NO = new Set(['no', 'n', 'false'])

const require = createRequire(import.meta.url)
let ajv: Ajv | undefined

/**
 * ajv with ajv-formats, loaded with the first form a card carries (see {@link prepareFields}):
 * most bridges never see a form field, and the two are about 11 MiB of RSS. Both are CommonJS, so
 * they load synchronously here.
 */
function validator(): Ajv {
  if (ajv) return ajv
  const { Ajv: AjvClass } = require('ajv') as typeof import('ajv')
  // ajv-formats' CommonJS export is the function, with itself as `default`.
  const addFormats = (require('ajv-formats') as { default: (ajv: Ajv) => Ajv }).default
  ajv = addFormats(new AjvClass({ allErrors: false, strict: false }))
  return ajv
}
const compiled = new Map<string, ValidateFunction>()

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema)
  let validate = compiled.get(key)
  if (!validate) {
    validate = validator().compile(schema)
    if (compiled.size > 500) compiled.clear()
    compiled.set(key, validate)
  }
  return validate
}

const FORMAT_WORDS: Record<string, string> = {
  email: 'an email address',
  uri: 'a URL (such as https://example.com)',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date and time (such as 2026-05-01T09:30:00Z)',
}

/** One sentence for a person, from ajv's first error. */
function explain(error: ErrorObject | undefined, schema: Record<string, unknown>): string {
  const p = (error?.params ?? {}) as Record<string, unknown>
  switch (error?.keyword) {
    case 'format':
      return `must be ${FORMAT_WORDS[String(p.format)] ?? `in the format ${String(p.format)}`}`
    case 'minLength':
      return `must be at least ${String(p.limit)} characters`
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`
    case 'pattern':
      return `must match the pattern ${String(p.pattern)}`
    case 'minimum':
      return `must be at least ${String(p.limit)}`
    case 'maximum':
      return `must be at most ${String(p.limit)}`
    case 'exclusiveMinimum':
      return `must be more than ${String(p.limit)}`
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`
    case 'enum':
    case 'const':
    case 'anyOf':
    case 'oneOf':
      return `must be one of the options${Array.isArray(schema.enum) ? ` (${schema.enum.map(String).join(', ')})` : ''}`
    case 'type':
      return `must be ${String(p.type) === 'integer' ? 'a whole number' : `a ${String(p.type)}`}`
    default:
      return error?.message ?? 'is not valid'
  }
}

/** The schema a single typed value is checked against (an array field checks one item). */
function valueSchema(rule: FieldRule): Record<string, unknown> {
  if (rule.kind === 'multi') return (rule.schema.items as Record<string, unknown> | undefined) ?? {}
  return rule.schema
}

/**
 * Check text a person typed for a field and turn it into the field's value. Numbers are parsed,
 * yes/no become booleans, and the result is validated against the property's schema (format,
 * length, pattern, minimum and maximum) with ajv and ajv-formats.
 */
export function checkFieldText(rule: FieldRule, raw: string): FieldCheck {
  const text = raw.trim()
  let value: FieldValue
  switch (rule.kind) {
    case 'number':
    case 'integer': {
      const n = text === '' ? Number.NaN : Number(text)
      if (!Number.isFinite(n)) return { ok: false, message: 'must be a number' }
      if (rule.kind === 'integer' && !Number.isInteger(n))
        return { ok: false, message: 'must be a whole number' }
      value = n
      break
    }
    case 'boolean': {
      const t = text.toLowerCase()
      if (YES.has(t)) value = true
      else if (NO.has(t)) value = false
      else return { ok: false, message: 'must be yes or no' }
      break
    }
    case 'decision':
      return { ok: false, message: 'choose one of the options' }
    default:
      value = text
  }
  const schema = valueSchema(rule)
  const validate = validatorOf(schema)
  if (!validate(value)) return { ok: false, message: explain(validate.errors?.[0], schema) }
  return { ok: true, value }
}

/** The value of a chosen option label (titles map to their `const`; yes/no to booleans). */
export function optionValue(rule: FieldRule, label: string): string | boolean {
  if (rule.kind === 'boolean') return label === BOOLEAN_LABELS.yes
  return rule.values?.[label] ?? label
}

/**
 * Compile the validators of a form's fields now (loading ajv with the first): done when the card
 * is built, on the ask's path, so that no person's click waits for ajv to load (about 80 ms on
 * this project's machine) or for a schema to compile (about 40 ms for the first).
 */
export function prepareFields(fields: Record<string, FieldRule>): void {
  for (const rule of Object.values(fields)) {
    if (rule.kind === 'decision') continue
    try {
      validatorOf(valueSchema(rule))
      if (rule.kind === 'multi') validatorOf(rule.schema)
    } catch {
      // A schema ajv cannot compile fails where it is used, with the person's answer, as before.
    }
  }
}

/** The option labels of a boolean field. */
export const BOOLEAN_LABELS = { yes: 'Yes', no: 'No' } as const

/** Check a whole multi-select value (minItems / maxItems). */
export function checkFieldArray(rule: FieldRule, values: string[]): FieldCheck {
  const validate = validatorOf(rule.schema)
  if (!validate(values)) {
    const e = validate.errors?.[0]
    const limit = String((e?.params as { limit?: unknown } | undefined)?.limit)
    if (e?.keyword === 'minItems') return { ok: false, message: `choose at least ${limit}` }
    if (e?.keyword === 'maxItems') return { ok: false, message: `choose at most ${limit}` }
    return { ok: false, message: explain(e, rule.schema) }
  }
  return { ok: true, value: values }
}
