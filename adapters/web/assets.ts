import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { HttpError } from '../../src/server/errors.js'

/** Where the inbox page loads its script from (a module; its imports are siblings). */
export const CLIENT_ENTRY = '/inbox/client/main.js'

/** The compiled page script (adapters/web/client, built by `npm run build`). */
function clientDir(): URL {
  // Built: this file is dist/adapters/web/assets.js and the script sits beside it. Run from
  // source (tests, tsx), the script comes from the build in dist/.
  const beside = new URL('./client/', import.meta.url)
  if (existsSync(new URL('main.js', beside))) return beside
  return new URL('../../dist/adapters/web/client/', import.meta.url)
}

/** Only the compiled modules: no source, declaration or map files, no path outside the folder. */
const FILE_NAME = /^[a-z][a-z0-9-]{0,40}\.js$/

const cache = new Map<string, Buffer>()

/** Serve one module of the page script (`GET /inbox/client/:file`). */
export async function serveClientFile(res: ServerResponse, name: string): Promise<void> {
  if (!FILE_NAME.test(name)) throw new HttpError('NOT_FOUND', 'no such inbox file')
  let body = cache.get(name)
  if (!body) {
    const url = new URL(name, clientDir())
    if (!existsSync(url)) {
      if (existsSync(new URL('main.js', clientDir()))) throw new HttpError('NOT_FOUND', 'no such inbox file')
      throw new HttpError('NOT_BUILT', 'the inbox page script is not built: run `npm run build`')
    }
    body = await readFile(url)
    cache.set(name, body)
  }
  res.writeHead(200, {
    'content-type': 'text/javascript; charset=utf-8',
    'content-length': body.length,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  })
  res.end(body)
}
