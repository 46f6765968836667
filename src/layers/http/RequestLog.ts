/**
 * Every request gets an `x-request-id` (the caller's, or a new one) and one log line. (Tracing is
 * off for the whole server: src/layers/AppLive.ts.)
 */
import { HttpEffect, HttpMiddleware, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"

export const requestLog = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = request.headers["x-request-id"] || randomUUID()
    const started = performance.now()
    // The response is written before a middleware sees it: headers go in through a pre-response handler.
    yield* HttpEffect.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    )
    const response = yield* app.pipe(
      Effect.catchCause((cause) => Effect.map(HttpServerError.causeResponse(cause), ([response]) => response))
    )
    yield* Effect.logInfo("request").pipe(
      Effect.annotateLogs({
        request_id: requestId,
        method: request.method,
        path: request.url.split("?")[0],
        status: response.status,
        duration_ms: Math.round((performance.now() - started) * 10) / 10
      })
    )
    return response
  })
)
