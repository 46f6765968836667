/**
 * Every request gets an `x-request-id` (the caller's, when it is one header of at most 200
 * printable ASCII characters, else a new one) and one log line, written
 * when its answer is ready, or, for a streamed answer (an event stream), when the stream ends
 * (a HEAD's when its answer is ready: its body is never sent). A request whose client went away
 * before its answer is logged with effect/http's status for it, 499 ("client closed request", as
 * nginx logs it), though nothing is sent: it is no failure of the server (JsonBody's read of a
 * body that never arrived ends so too).
 * (Tracing is off for the whole server: src/layers/AppLive.ts.)
 *
 * It wraps the app rather than being the listener's middleware: effect/http answers a request
 * served without a middleware in one step, and through one the same requests cost 10 to 60 µs
 * more CPU each (docs/performance-record.md, "A request's own costs, measured in its process").
 */
import { HttpBody, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { headerCount } from "./HeaderCount.ts"

/** A caller's id: printable ASCII, short enough for a log line (it is written in every one of its request's). */
const CALLER_REQUEST_ID = /^[\x20-\x7e]{1,200}$/

/**
 * The caller's `x-request-id` when it is one header and a `CALLER_REQUEST_ID`, else a new one: the
 * id is a courtesy, so one that is not kept is replaced, not refused. Node joins several into
 * "a, b", which named neither request.
 */
const requestIdOf = (request: HttpServerRequest.HttpServerRequest) => {
  const given = request.headers["x-request-id"]
  return given !== undefined && CALLER_REQUEST_ID.test(given) && headerCount(request, "x-request-id") === 1 ? given : randomUUID()
}

export const requestLog = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const requestId = requestIdOf(request)
    const started = performance.now()
    const logLine = (status: number) =>
      Effect.suspend(() =>
        Effect.logInfo("request").pipe(
          Effect.annotateLogs({
            request_id: requestId,
            method: request.method,
            path: request.url.split("?")[0],
            status,
            duration_ms: Math.round((performance.now() - started) * 10) / 10
          })
        )
      )
    return app.pipe(
      Effect.catchCause((cause) => Effect.map(HttpServerError.causeResponse(cause), ([response]) => response)),
      Effect.flatMap((answer) => {
        const response = HttpServerResponse.setHeader(answer, "x-request-id", requestId)
        const body = response.body
        // A HEAD's body is never read, so its stream would never end: it is logged now, as any answer.
        return body._tag === "Stream" && request.method !== "HEAD"
          ? Effect.succeed(HttpServerResponse.setBody(
            response,
            HttpBody.stream(Stream.ensuring(body.stream, logLine(response.status)), body.contentType, body.contentLength)
          ))
          : Effect.as(logLine(response.status), response)
      })
    )
  })
