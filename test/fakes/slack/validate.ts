/**
 * The fake Slack's payload checks: the documented Block Kit and view limits
 * (docs/platform-limits.md#block-kit-and-views), kept apart from the adapter's own constants so a wrong
 * constant in the adapter is caught here. Returns Slack's error code and messages in the shape
 * Slack answers with (`invalid_blocks` + `response_metadata.messages`).
 */

export interface Problem {
  error: string
  messages: string[]
}

type Json = Record<string, unknown>

const LIMITS = {
  messageBlocks: 50,
  modalBlocks: 100,
  blockId: 255,
  actionId: 255,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  headerText: 150,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2000,
  buttonUrl: 3000,
  selectOptions: 100,
  optionGroups: 100,
  checkboxOptions: 10,
  radioOptions: 10,
  optionText: 75,
  optionDescription: 75,
  optionValue: 150,
  optionGroupLabel: 75,
  placeholder: 150,
  inputLabel: 2000,
  inputHint: 2000,
  inputMaxLength: 3000,
  modalTitle: 24,
  modalButton: 24,
  privateMetadata: 3000,
  callbackId: 255,
  imageUrl: 3000,
  altText: 2000,
  viewBytes: 250_000,
  /** `msg_blocks_too_long`: undocumented, "about 13k characters across blocks" (bolt-js #2509). */
  blockTextTotal: 13_000,
  messageText: 40_000,
} as const

class Checker {
  readonly messages: string[] = []
  text = 0
  readonly actionIds = new Set<string>()
  readonly blockIds = new Set<string>()

  fail(path: string, message: string) {
    this.messages.push(`[ERROR] ${message} [json-pointer:${path}]`)
  }

  textObject(value: unknown, path: string, max: number, opts: { plainOnly?: boolean; count?: boolean } = {}) {
    if (!isObj(value)) return this.fail(path, 'must be a text object')
    const { type, text } = value
    if (type !== 'plain_text' && type !== 'mrkdwn')
      return this.fail(`${path}/type`, 'must be plain_text or mrkdwn')
    if (opts.plainOnly && type !== 'plain_text') return this.fail(`${path}/type`, 'must be plain_text')
    if (typeof text !== 'string') return this.fail(`${path}/text`, 'must be a string')
    if (text.length === 0) this.fail(`${path}/text`, 'must be more than 0 characters')
    if (text.length > max) this.fail(`${path}/text`, `must be less than ${max + 1} characters`)
    if (opts.count !== false) this.text += text.length
  }

  string(value: unknown, path: string, max: number, min = 1) {
    if (typeof value !== 'string') return this.fail(path, 'must be a string')
    if (value.length < min) this.fail(path, `must be more than ${min - 1} characters`)
    if (value.length > max) this.fail(path, `must be less than ${max + 1} characters`)
  }

  actionId(value: unknown, path: string) {
    this.string(value, path, LIMITS.actionId)
    if (typeof value === 'string') {
      if (this.actionIds.has(value)) this.fail(path, 'action_id must be unique')
      this.actionIds.add(value)
    }
  }

  option(value: unknown, path: string, plainOnly: boolean) {
    if (!isObj(value)) return this.fail(path, 'must be an option object')
    this.textObject(value.text, `${path}/text`, LIMITS.optionText, { plainOnly, count: false })
    this.string(value.value, `${path}/value`, LIMITS.optionValue)
    if (value.description !== undefined) {
      this.textObject(value.description, `${path}/description`, LIMITS.optionDescription, {
        plainOnly,
        count: false,
      })
    }
  }

  options(el: Json, path: string, max: number, plainOnly: boolean): Json[] {
    const all: Json[] = []
    if (el.options !== undefined && el.option_groups !== undefined) {
      this.fail(path, 'must provide either options or option_groups, not both')
    }
    if (el.options !== undefined) {
      if (!Array.isArray(el.options) || el.options.length === 0)
        this.fail(`${path}/options`, 'must provide options')
      else {
        if (el.options.length > max)
          this.fail(`${path}/options`, `must provide an array of no more than ${max} items`)
        el.options.forEach((o, i) => {
          this.option(o, `${path}/options/${i}`, plainOnly)
          if (isObj(o)) all.push(o)
        })
      }
    } else if (el.option_groups !== undefined) {
      const groups = el.option_groups
      if (!Array.isArray(groups) || groups.length === 0)
        this.fail(`${path}/option_groups`, 'must provide option groups')
      else {
        if (groups.length > LIMITS.optionGroups) {
          this.fail(
            `${path}/option_groups`,
            `must provide an array of no more than ${LIMITS.optionGroups} items`,
          )
        }
        groups.forEach((g, gi) => {
          if (!isObj(g)) {
            this.fail(`${path}/option_groups/${gi}`, 'must be an option group')
            return
          }
          this.textObject(g.label, `${path}/option_groups/${gi}/label`, LIMITS.optionGroupLabel, {
            plainOnly: true,
            count: false,
          })
          if (
            !Array.isArray(g.options) ||
            g.options.length === 0 ||
            g.options.length > LIMITS.selectOptions
          ) {
            this.fail(
              `${path}/option_groups/${gi}/options`,
              `must provide 1 to ${LIMITS.selectOptions} options`,
            )
            return
          }
          g.options.forEach((o, i) => {
            this.option(o, `${path}/option_groups/${gi}/options/${i}`, true)
            if (isObj(o)) all.push(o)
          })
        })
      }
    } else {
      this.fail(path, 'must provide options or option_groups')
    }
    return all
  }

  initial(el: Json, path: string, all: Json[]) {
    const matches = (o: unknown) => all.some((a) => JSON.stringify(a) === JSON.stringify(o))
    if (el.initial_option !== undefined && !matches(el.initial_option)) {
      this.fail(`${path}/initial_option`, 'must match one of the provided options')
    }
    if (el.initial_options !== undefined) {
      if (!Array.isArray(el.initial_options)) return this.fail(`${path}/initial_options`, 'must be an array')
      el.initial_options.forEach((o, i) => {
        if (!matches(o)) this.fail(`${path}/initial_options/${i}`, 'must match one of the provided options')
      })
    }
  }

  element(el: unknown, path: string) {
    if (!isObj(el)) return this.fail(path, 'must be an element')
    switch (el.type) {
      case 'button':
        this.actionId(el.action_id, `${path}/action_id`)
        this.textObject(el.text, `${path}/text`, LIMITS.buttonText, { plainOnly: true })
        if (el.value !== undefined) this.string(el.value, `${path}/value`, LIMITS.buttonValue)
        if (el.url !== undefined) this.string(el.url, `${path}/url`, LIMITS.buttonUrl)
        if (el.style !== undefined && el.style !== 'primary' && el.style !== 'danger') {
          this.fail(`${path}/style`, 'must be primary or danger')
        }
        return
      case 'static_select':
      case 'multi_static_select': {
        this.actionId(el.action_id, `${path}/action_id`)
        if (el.placeholder !== undefined) {
          this.textObject(el.placeholder, `${path}/placeholder`, LIMITS.placeholder, {
            plainOnly: true,
            count: false,
          })
        }
        const all = this.options(el, path, LIMITS.selectOptions, true)
        this.initial(el, path, all)
        if (el.type === 'static_select' && el.initial_options !== undefined) {
          this.fail(`${path}/initial_options`, 'is not allowed on static_select')
        }
        if (
          el.max_selected_items !== undefined &&
          (typeof el.max_selected_items !== 'number' || el.max_selected_items < 1)
        ) {
          this.fail(`${path}/max_selected_items`, 'must be at least 1')
        }
        return
      }
      case 'checkboxes':
      case 'radio_buttons': {
        this.actionId(el.action_id, `${path}/action_id`)
        const max = el.type === 'checkboxes' ? LIMITS.checkboxOptions : LIMITS.radioOptions
        if (el.option_groups !== undefined) this.fail(`${path}/option_groups`, 'is not allowed here')
        const all = this.options(el, path, max, false)
        this.initial(el, path, all)
        return
      }
      case 'overflow':
        this.actionId(el.action_id, `${path}/action_id`)
        this.options(el, path, 5, true)
        return
      default:
        this.fail(`${path}/type`, `unsupported element type ${String(el.type)}`)
    }
  }

  block(block: unknown, path: string, surface: 'message' | 'modal') {
    if (!isObj(block)) return this.fail(path, 'must be a block')
    if (block.block_id !== undefined) {
      this.string(block.block_id, `${path}/block_id`, LIMITS.blockId)
      if (typeof block.block_id === 'string') {
        if (this.blockIds.has(block.block_id)) this.fail(`${path}/block_id`, 'block_id must be unique')
        this.blockIds.add(block.block_id)
      }
    }
    switch (block.type) {
      case 'header':
        this.textObject(block.text, `${path}/text`, LIMITS.headerText, { plainOnly: true })
        return
      case 'section':
        if (block.text === undefined && block.fields === undefined)
          this.fail(path, 'must provide text or fields')
        if (block.text !== undefined) this.textObject(block.text, `${path}/text`, LIMITS.sectionText)
        if (block.fields !== undefined) {
          if (!Array.isArray(block.fields) || block.fields.length > LIMITS.sectionFields) {
            this.fail(`${path}/fields`, `must provide no more than ${LIMITS.sectionFields} fields`)
          } else {
            block.fields.forEach((f, i) => {
              this.textObject(f, `${path}/fields/${i}`, LIMITS.sectionFieldText)
            })
          }
        }
        if (block.accessory !== undefined) this.element(block.accessory, `${path}/accessory`)
        return
      case 'context': {
        const els = block.elements
        if (!Array.isArray(els) || els.length === 0 || els.length > LIMITS.contextElements) {
          return this.fail(`${path}/elements`, `must provide 1 to ${LIMITS.contextElements} elements`)
        }
        els.forEach((el, i) => {
          if (isObj(el) && el.type === 'image') {
            this.string(el.image_url, `${path}/elements/${i}/image_url`, LIMITS.imageUrl)
            this.string(el.alt_text, `${path}/elements/${i}/alt_text`, LIMITS.altText)
          } else {
            this.textObject(el, `${path}/elements/${i}`, LIMITS.sectionText)
          }
        })
        return
      }
      case 'actions': {
        const els = block.elements
        if (!Array.isArray(els) || els.length === 0 || els.length > LIMITS.actionsElements) {
          return this.fail(`${path}/elements`, `must provide 1 to ${LIMITS.actionsElements} elements`)
        }
        els.forEach((el, i) => {
          this.element(el, `${path}/elements/${i}`)
        })
        return
      }
      case 'divider':
        return
      case 'input': {
        if (surface !== 'modal') return this.fail(`${path}/type`, 'input blocks belong in modals here')
        this.textObject(block.label, `${path}/label`, LIMITS.inputLabel, { plainOnly: true, count: false })
        if (block.hint !== undefined) {
          this.textObject(block.hint, `${path}/hint`, LIMITS.inputHint, { plainOnly: true, count: false })
        }
        const el = block.element
        if (!isObj(el) || el.type !== 'plain_text_input')
          return this.fail(`${path}/element`, 'unsupported input element')
        this.actionId(el.action_id, `${path}/element/action_id`)
        const max = el.max_length
        if (max !== undefined && (typeof max !== 'number' || max < 1 || max > LIMITS.inputMaxLength)) {
          this.fail(`${path}/element/max_length`, `must be between 1 and ${LIMITS.inputMaxLength}`)
        }
        const min = el.min_length
        if (min !== undefined && (typeof min !== 'number' || min < 0 || min > LIMITS.inputMaxLength)) {
          this.fail(`${path}/element/min_length`, `must be between 0 and ${LIMITS.inputMaxLength}`)
        }
        if (el.placeholder !== undefined) {
          this.textObject(el.placeholder, `${path}/element/placeholder`, LIMITS.placeholder, {
            plainOnly: true,
          })
        }
        if (el.initial_value !== undefined) {
          const limit = typeof max === 'number' ? max : LIMITS.inputMaxLength
          if (typeof el.initial_value !== 'string' || el.initial_value.length > limit) {
            this.fail(`${path}/element/initial_value`, 'must not be longer than max_length')
          }
        }
        return
      }
      default:
        this.fail(`${path}/type`, `unsupported block type ${String(block.type)}`)
    }
  }
}

function isObj(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Check chat.postMessage / chat.update / chat.postEphemeral arguments. */
export function checkMessage(args: Json): Problem | undefined {
  const { text, blocks } = args
  if (blocks === undefined) {
    if (typeof text !== 'string' || text === '') return { error: 'no_text', messages: [] }
    return undefined
  }
  if (!Array.isArray(blocks)) return { error: 'invalid_blocks_format', messages: ['blocks must be an array'] }
  const c = new Checker()
  if (blocks.length === 0) c.fail('/blocks', 'must provide at least 1 block')
  if (blocks.length > LIMITS.messageBlocks) {
    c.fail('/blocks', `must provide an array of no more than ${LIMITS.messageBlocks} items`)
  }
  blocks.forEach((b, i) => {
    c.block(b, `/blocks/${i}`, 'message')
  })
  if (c.messages.length > 0) return { error: 'invalid_blocks', messages: c.messages }
  if (c.text > LIMITS.blockTextTotal) return { error: 'msg_blocks_too_long', messages: [] }
  return undefined
}

/** Check a view for views.open / views.update. */
export function checkView(view: unknown): Problem | undefined {
  if (!isObj(view)) return { error: 'invalid_arguments', messages: ['[ERROR] must provide a view'] }
  if (JSON.stringify(view).length > LIMITS.viewBytes) return { error: 'view_too_large', messages: [] }
  const c = new Checker()
  if (view.type !== 'modal') c.fail('/view/type', 'must be modal')
  c.textObject(view.title, '/view/title', LIMITS.modalTitle, { plainOnly: true })
  if (view.close !== undefined)
    c.textObject(view.close, '/view/close', LIMITS.modalButton, { plainOnly: true })
  if (view.submit !== undefined)
    c.textObject(view.submit, '/view/submit', LIMITS.modalButton, { plainOnly: true })
  if (view.callback_id !== undefined) c.string(view.callback_id, '/view/callback_id', LIMITS.callbackId)
  if (view.private_metadata !== undefined) {
    c.string(view.private_metadata, '/view/private_metadata', LIMITS.privateMetadata, 0)
  }
  const blocks = view.blocks
  if (!Array.isArray(blocks) || blocks.length === 0) c.fail('/view/blocks', 'must provide blocks')
  else {
    if (blocks.length > LIMITS.modalBlocks) {
      c.fail('/view/blocks', `must provide an array of no more than ${LIMITS.modalBlocks} items`)
    }
    blocks.forEach((b, i) => {
      c.block(b, `/view/blocks/${i}`, 'modal')
    })
    if (blocks.some((b) => isObj(b) && b.type === 'input') && view.submit === undefined) {
      c.fail('/view/submit', 'must provide submit when the view has inputs')
    }
  }
  return c.messages.length > 0 ? { error: 'invalid_arguments', messages: c.messages } : undefined
}

/** Mentions that would notify people: `<!channel>`, `<!here>`, `<!everyone>`, `<@U…>`, `<!subteam^…>`. */
export function mentionsIn(value: unknown): string[] {
  const found: string[] = []
  const walk = (v: unknown, key?: string) => {
    if (typeof v === 'string') {
      // Only mrkdwn and top-level text are parsed for mentions.
      if (key === 'text' || key === 'mrkdwn') {
        for (const m of v.matchAll(
          /<(!channel|!here|!everyone|@[UW][A-Z0-9]+|!subteam\^[A-Z0-9]+)(\|[^>]*)?>/g,
        )) {
          found.push(m[1] ?? '')
        }
      }
      return
    }
    if (Array.isArray(v)) {
      for (const x of v) walk(x, key)
      return
    }
    if (isObj(v)) {
      if (v.type === 'plain_text') return
      for (const [k, x] of Object.entries(v)) walk(x, k)
    }
  }
  walk(value)
  return found
}
