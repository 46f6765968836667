/**
 * `Expect: 100-continue`: the client sends its body only once the server says `100 Continue`.
 * The listener (NodeServer.ts) registers such requests; the body reader (JsonBody.ts) says
 * `100 Continue` as it starts reading, so a request refused from its headers (401, 413, 415)
 * never has its body sent. effect/http says it only when its own body readers start, which
 * JsonBody does not use: a client that waited was answered 408 after 30 s, curl waited 1 s.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

/** Requests whose client waits for `100 Continue`, and their answers. */
const awaitingContinue = new WeakMap<IncomingMessage, ServerResponse>()

/** `request`'s client waits for `100 Continue` before it sends the body. */
export const awaitContinue = (request: IncomingMessage, response: ServerResponse) => {
  awaitingContinue.set(request, response)
}

/** Tells the client of `request` to send its body, if it waits to be told. */
export const continueBody = (request: IncomingMessage) => {
  const response = awaitingContinue.get(request)
  if (response === undefined) return
  awaitingContinue.delete(request)
  if (!response.headersSent) response.writeContinue()
}
