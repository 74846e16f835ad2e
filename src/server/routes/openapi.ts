/** `GET /v1/openapi.json`: the API's OpenAPI document, from the schemas the routes parse with. */
import { sendJson } from '../body.js'
import { openApiDocument } from '../openapi.js'
import type { Router } from '../router.js'
import { answerBodySchema } from './answer.js'
import { askBodySchema } from './ask.js'

/** Register `GET /v1/openapi.json`. */
export function addOpenApiRoutes(router: Router): void {
  router.add('GET', '/v1/openapi.json', ({ res }) =>
    sendJson(res, 200, openApiDocument({ ask: askBodySchema, answer: answerBodySchema })),
  )
}
