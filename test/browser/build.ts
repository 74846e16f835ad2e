import { ensureBuilt } from '../cli/built.js'

/** The page's script is served from the build (dist/adapters/web/client): build once, first. */
export default async function setup(): Promise<void> {
  await ensureBuilt()
}
