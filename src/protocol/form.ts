/**
 * Form fields as a request carries them: askbridge's own rules for a question whose answer must
 * be a typed value (an MCP elicitation property). They are part of the request, so they live with
 * the protocol; the card checks answers against them (src/card/fields.ts).
 */

/** How a field turns a person's answer into a value. */
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'single' | 'multi' | 'decision'

export interface FieldRule {
  kind: FieldKind
  /** The property's JSON schema (a flat primitive schema; see src/hooks/elicit.ts). */
  schema: Record<string, unknown>
  /** A required property cannot be skipped. */
  required: boolean
  /** The field's name for people (the property title), used in refusals. */
  title?: string
  /** Option label -> value, for select fields whose labels are titles. */
  values?: Record<string, string>
  /** `decision` fields: the label that declines the whole form (the other questions may stay empty). */
  decline?: string
}

/** The form a request carries: field rules by question id, and pre-selected answers. */
export interface FormSpec {
  fields: Record<string, FieldRule>
  defaults?: Record<string, { selected: string[]; custom?: string }>
}
