/**
 * The request as routes see it: the original, except that every way of reading its body goes
 * through one JsonBody (scanned as it arrives, under the route's limits). Nothing reads the body
 * until a route asks for it, and HttpApiBuilder asks only after the endpoint's security
 * middleware has accepted the caller, so an unauthenticated request is answered without its
 * body being read.
 */
import { HttpIncomingMessage, HttpServerError, HttpServerRequest, type Multipart, type UrlParams } from "effect/http"
import { Effect, Inspectable, type Schema, Stream } from "effect"
import type { JsonBody } from "./JsonBody.ts"

export class GuardedRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: typeof HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: typeof HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly original: HttpServerRequest.HttpServerRequest
  readonly body: JsonBody

  constructor(original: HttpServerRequest.HttpServerRequest, body: JsonBody) {
    super()
    this.original = original
    this.body = body
  }

  get source() {
    return this.original.source
  }
  get url() {
    return this.original.url
  }
  get originalUrl() {
    return this.original.originalUrl
  }
  get method() {
    return this.original.method
  }
  get cookies() {
    return this.original.cookies
  }
  get headers() {
    return this.original.headers
  }
  get remoteAddress() {
    return this.original.remoteAddress
  }
  get peerAddress() {
    return this.original.peerAddress
  }
  get protocol() {
    return this.original.protocol
  }
  get upgrade() {
    return this.original.upgrade
  }
  get upgradeWith() {
    return this.original.upgradeWith
  }

  get text(): Effect.Effect<string, HttpServerError.HttpServerError> {
    return this.body.text
  }
  get json(): Effect.Effect<Schema.Json, HttpServerError.HttpServerError> {
    return this.body.json as Effect.Effect<Schema.Json, HttpServerError.HttpServerError>
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.HttpServerError> {
    return Effect.map(this.body.bytes, (bytes) => Uint8Array.from(bytes).buffer)
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.HttpServerError> {
    return Stream.fromEffect(this.body.bytes)
  }
  /** Only JSON bodies are accepted (RequestGuards answers 415 first), so these never run. */
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.HttpServerError> {
    return Effect.fail(this.notJson())
  }
  get multipart(): Effect.Effect<Multipart.Persisted, Multipart.MultipartError> {
    return Effect.die(new Error("multipart bodies are not accepted"))
  }
  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return Stream.die(new Error("multipart bodies are not accepted"))
  }

  modify(options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]): HttpServerRequest.HttpServerRequest {
    return new GuardedRequest(this.original.modify(options), this.body)
  }

  toJSON(): unknown {
    return this.original.toJSON()
  }

  private notJson() {
    return new HttpServerError.HttpServerError({
      reason: new HttpServerError.RequestParseError({ request: this, description: "only JSON bodies are accepted" })
    })
  }
}
