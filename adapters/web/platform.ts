/** The web inbox as a platform module: always on, no variables of its own; it is the bridge's inbox. */
import type { PlatformModule } from '../../src/adapter-kit.js'

export const web: PlatformModule = {
  id: 'web',
  name: 'the web inbox',
  env: {},
  secrets: [],
  async build({ store, logger, heartbeatMs }) {
    const { WebAdapter } = await import('./adapter.js')
    const inbox = new WebAdapter({ store, logger, ...(heartbeatMs === undefined ? {} : { heartbeatMs }) })
    return { adapter: inbox, destination: { platform: 'web' }, inbox }
  },
}
