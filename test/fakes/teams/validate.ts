/**
 * The fake Teams connector's checks of an outgoing message, written from Microsoft's documents
 * independently of the renderer: an activity of type `message` with one Adaptive Card attachment
 * (schema 1.5, known element types), Action.Execute buttons with data, unique input ids, at most
 * ~28 KB in all, and `<at>` only where the card lists a matching mention entity.
 */
const ELEMENTS = new Set([
  'TextBlock',
  'Container',
  'ActionSet',
  'Input.Text',
  'Input.ChoiceSet',
  'ColumnSet',
  'Column',
])
const ACTIONS = new Set(['Action.Execute', 'Action.OpenUrl', 'Action.Submit'])

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export const MESSAGE_BYTES = 28 * 1024

export function validateActivity(activity: unknown): string[] {
  const problems: string[] = []
  if (!isObject(activity)) return ['activity is not an object']
  if (activity.type !== 'message') problems.push(`activity.type is ${String(activity.type)}, not "message"`)
  const bytes = Buffer.byteLength(JSON.stringify(activity), 'utf8')
  if (bytes > MESSAGE_BYTES) problems.push(`message is ${bytes} bytes, over ${MESSAGE_BYTES}`)
  const attachments = activity.attachments
  if (attachments === undefined) {
    if (typeof activity.text !== 'string' || activity.text === '')
      problems.push('a message needs text or attachments')
    else if (/<at>/i.test(activity.text) && !Array.isArray(activity.entities))
      problems.push('<at> in text without mention entities')
    return problems
  }
  if (!Array.isArray(attachments) || attachments.length !== 1) return [...problems, 'expected one attachment']
  const attachment = attachments[0]
  if (!isObject(attachment) || attachment.contentType !== 'application/vnd.microsoft.card.adaptive')
    return [...problems, 'the attachment is not an Adaptive Card']
  const card = attachment.content
  if (!isObject(card) || card.type !== 'AdaptiveCard') return [...problems, 'content is not an AdaptiveCard']
  if (card.version !== '1.5') problems.push(`card version ${String(card.version)}; Action.Execute needs 1.5`)
  const ids = new Set<string>()
  const mentionTexts = new Set<string>()
  const msteams = card.msteams
  if (isObject(msteams) && Array.isArray(msteams.entities)) {
    for (const e of msteams.entities) {
      if (!isObject(e) || e.type !== 'mention' || typeof e.text !== 'string' || !isObject(e.mentioned))
        problems.push('malformed mention entity')
      else mentionTexts.add(e.text)
    }
  }
  const action = (a: unknown, at: string) => {
    if (!isObject(a) || typeof a.type !== 'string' || !ACTIONS.has(a.type)) {
      problems.push(`${at}: unknown action`)
      return
    }
    if (typeof a.title !== 'string' || a.title === '') problems.push(`${at}: action without a title`)
    if (a.type === 'Action.Execute' && (!isObject(a.data) || typeof a.verb !== 'string'))
      problems.push(`${at}: Action.Execute needs verb and data`)
    if (a.type === 'Action.OpenUrl' && (typeof a.url !== 'string' || !/^https?:\/\//.test(a.url)))
      problems.push(`${at}: Action.OpenUrl needs an http(s) url`)
  }
  const element = (el: unknown, at: string) => {
    if (!isObject(el) || typeof el.type !== 'string' || !ELEMENTS.has(el.type)) {
      problems.push(`${at}: unknown element ${isObject(el) ? String(el.type) : ''}`)
      return
    }
    if (el.type.startsWith('Input.')) {
      if (typeof el.id !== 'string' || el.id === '') problems.push(`${at}: input without id`)
      else if (ids.has(el.id)) problems.push(`${at}: duplicate input id ${el.id}`)
      else ids.add(el.id)
      if (el.inlineAction !== undefined) action(el.inlineAction, `${at}.inlineAction`)
      if (el.type === 'Input.ChoiceSet' && (!Array.isArray(el.choices) || el.choices.length === 0))
        problems.push(`${at}: ChoiceSet without choices`)
    }
    if (el.type === 'TextBlock') {
      if (typeof el.text !== 'string') problems.push(`${at}: TextBlock without text`)
      else
        for (const m of el.text.match(/<at>[^<]*<\/at>/gi) ?? [])
          if (!mentionTexts.has(m)) problems.push(`${at}: ${m} has no mention entity`)
    }
    if (Array.isArray(el.items))
      el.items.forEach((x, i) => {
        element(x, `${at}.items[${i}]`)
      })
    if (Array.isArray(el.actions))
      el.actions.forEach((x, i) => {
        action(x, `${at}.actions[${i}]`)
      })
  }
  if (!Array.isArray(card.body)) problems.push('card without body')
  else
    card.body.forEach((el, i) => {
      element(el, `body[${i}]`)
    })
  // Universal Actions' refresh: an Action.Execute, and at most 60 user ids (Teams user MRIs).
  if (card.refresh !== undefined) {
    const refresh = card.refresh
    if (!isObject(refresh)) problems.push('card.refresh is not an object')
    else {
      action(refresh.action, 'refresh.action')
      if (!isObject(refresh.action) || refresh.action.type !== 'Action.Execute')
        problems.push('refresh.action must be an Action.Execute')
      const userIds = refresh.userIds
      if (userIds !== undefined) {
        if (!Array.isArray(userIds) || userIds.some((u) => typeof u !== 'string' || !/^29:\S+$/.test(u)))
          problems.push('refresh.userIds must be Teams user ids (29:…)')
        else if (userIds.length > 60) problems.push(`refresh.userIds has ${userIds.length} ids, over 60`)
      }
    }
  }
  if (card.actions !== undefined) {
    if (!Array.isArray(card.actions)) problems.push('card.actions is not an array')
    else
      card.actions.forEach((a, i) => {
        action(a, `actions[${i}]`)
      })
  }
  return problems
}
