/** Discord's documented limits for legacy messages and modals (docs/platform-limits.md#messages-components-and-modals). */
export const DISCORD_LIMITS = {
  /** Top-level action rows per message. */
  rows: 5,
  buttonsPerRow: 5,
  selectOptions: 25,
  customId: 100,
  buttonLabel: 80,
  /** Select option label, value and description. */
  selectOptionText: 100,
  selectPlaceholder: 150,
  content: 2000,
  embedsPerMessage: 10,
  embedTitle: 256,
  embedDescription: 4096,
  embedAuthor: 256,
  embedFooter: 2048,
  /** Sum of every embed's title, description, field names and values, footer and author name. */
  embedTotal: 6000,
  modalTitle: 45,
  modalComponents: 5,
  labelLabel: 45,
  labelDescription: 100,
  textInputMax: 4000,
  textInputPlaceholder: 100,
  textDisplay: 4000,
} as const
