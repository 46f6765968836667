/**
 * How many headers of a name a request sent, from its raw headers: Node keeps only the first of
 * some (Host, Authorization, Content-Type) and joins the values of others with ", ", so the
 * parsed headers cannot tell one from several.
 */
import type { HttpServerRequest } from "effect/http"
import type { IncomingMessage } from "node:http"

/** How many `name` (lower case) headers the request sent. */
export const headerCount = (request: HttpServerRequest.HttpServerRequest, name: string) => {
  const raw = (request.source as Partial<IncomingMessage>).rawHeaders ?? []
  let count = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === name.length && raw[i].toLowerCase() === name) count++
  return count
}
