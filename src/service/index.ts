export * from './agents.js'
export * from './retention.js'
export * from './service.js'
export * from './waterfall.js'
