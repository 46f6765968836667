/**
 * A small client of the Docker Engine API, shared by check-connection (ProviderChecks.ts) and the
 * docker provider (DockerProvider.ts): a host given as `unix:///path`, an absolute socket path or
 * `tcp://host:port`; one request at a time with its own timeout; JSON bodies. Any HTTP status is an
 * answer (the caller decides what it means, with Docker's `message` from `dockerMessage`); only a host
 * that cannot be reached, or does not answer in time, fails (`DockerUnreachable`).
 */
import { HttpClientRequest } from "effect/http"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect, Schema } from "effect"
import type * as Https from "node:https"
import type { LookupFunction } from "node:net"
import { storableText } from "../../../domain/shared/StorableText.ts"

/** Whether `host` is a unix socket (`unix://…` or an absolute path), not `tcp://`. */
export const isSocketHost = (host: string) => host.startsWith("unix://") || host.startsWith("/")

/** Where a docker host's API is reached: a unix socket, or an http base URL for tcp://. */
export const dockerTarget = (host: string) =>
  isSocketHost(host)
    ? { socketPath: host.replace(/^unix:\/\//, ""), baseUrl: "http://docker" }
    : { socketPath: undefined, baseUrl: host.replace(/^tcp:\/\//, "http://").replace(/\/+$/, "") }

/** The Docker host could not be reached, or did not answer in time; `details` says which, for people. */
export class DockerUnreachable extends Schema.TaggedError<DockerUnreachable>()("DockerUnreachable", {
  details: Schema.String
}) {
  override get message() {
    return this.details
  }
}

/** One answer of the Docker Engine: its status, the body's bytes and their text. */
export interface DockerAnswer {
  readonly status: number
  readonly bytes: Uint8Array
  readonly text: string
}

/**
 * Docker's error message of a body (`{"message": ...}`; else the text itself), at most 300
 * characters, storable (a NUL, or the half of a pair the cut leaves, is U+FFFD: storableText): it
 * may end up in a pool machine's row and its calls' results.
 */
export const dockerMessage = (text: string) => {
  try {
    const parsed = JSON.parse(text) as { message?: unknown }
    if (typeof parsed.message === "string") return storableText(parsed.message.slice(0, 300))
  } catch {
    // not JSON: the text itself
  }
  return storableText(text.trim().slice(0, 300))
}

export interface DockerRequest {
  readonly method: "GET" | "POST" | "DELETE"
  /** The API path with its query string, e.g. `/containers/json?all=true`. */
  readonly path: string
  /** A JSON body. */
  readonly body?: unknown
  /** Default 5 seconds. */
  readonly timeout?: Duration.Input
  /** The socket `lookup` for tcp:// hosts (NetworkPolicy's, refusing private addresses when it blocks them). */
  readonly lookup?: LookupFunction | undefined
}

/** Sends one request to the Docker Engine at `host`. */
export const dockerRequest = (host: string, request: DockerRequest): Effect.Effect<DockerAnswer, DockerUnreachable> => {
  const timeout = Duration.fromInputUnsafe(request.timeout ?? Duration.seconds(5))
  const what = `${request.method} ${request.path}`
  return Effect.gen(function*() {
    const target = dockerTarget(host)
    const agentOptions = (target.socketPath !== undefined
      ? { socketPath: target.socketPath }
      : request.lookup === undefined
      ? {}
      : { lookup: request.lookup }) as Https.AgentOptions
    const client = yield* NodeHttpClient.makeNodeHttp.pipe(
      Effect.provideServiceEffect(NodeHttpClient.HttpAgent, NodeHttpClient.makeAgent(agentOptions))
    )
    const base = HttpClientRequest.make(request.method)(`${target.baseUrl}${request.path}`)
    const response = yield* client.execute(
      request.body === undefined ? base : HttpClientRequest.bodyJsonUnsafe(base, request.body)
    )
    const bytes = new Uint8Array(yield* response.arrayBuffer)
    return { status: response.status, bytes, text: new TextDecoder().decode(bytes) }
  }).pipe(
    Effect.scoped,
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new DockerUnreachable({
            details: `The Docker Engine at ${host} did not answer ${what} within ${Duration.toSeconds(timeout)} seconds`
          })
        )
    }),
    Effect.catchTag("HttpClientError", (error) =>
      Effect.fail(
        new DockerUnreachable({
          details: `Cannot reach the Docker Engine at ${host} (${what}): ${
            error.reason.cause instanceof Error ? error.reason.cause.message : error.message
          }`
        })
      ))
  )
}
