/** Raw HTTP against the test server, for what neither the typed client nor `rawRequest` can do. */
import { HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { request as httpRequest } from "node:http"

/**
 * POSTs the headers of a JSON body of `length` bytes and only its first byte: a server that
 * refuses the body from its Content-Length answers before the rest would be sent.
 */
export const declareBody = (path: string, token: string, length: number) =>
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = (server.address as HttpServer.TcpAddress).port
    return yield* Effect.async<{ status: number; json: Record<string, unknown> }>((resume) => {
      const request = httpRequest({
        host: "127.0.0.1",
        port,
        method: "POST",
        path,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(length) }
      }, (response) => {
        let body = ""
        response.on("data", (chunk) => body += chunk)
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, json: JSON.parse(body) })))
      })
      request.on("error", () => undefined)
      request.write("{")
      return Effect.sync(() => request.destroy())
    })
  })

/** GETs `path` and returns the status, headers and body bytes. */
export const getBytes = (path: string, token: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(token)))).pipe(
      Effect.flatMap((response) =>
        Effect.map(response.arrayBuffer, (body) => ({
          status: response.status,
          headers: response.headers,
          bytes: Buffer.from(body)
        }))
      ),
      Effect.scoped,
      Effect.orDie
    )
