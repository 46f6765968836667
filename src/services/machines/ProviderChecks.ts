/**
 * Read-only checks of a machine provider's credential and config (check-connection,
 * docs/machine-pools.md): for `docker`, the Docker Engine API at the pool's host (ping, version,
 * the image present); for `local`, the operator's key and whether bubblewrap is installed. A
 * check that fails says why in `details` (`unprocessable`).
 */
import { HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Option, Redacted, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import { constants } from "node:fs"
import { access } from "node:fs/promises"
import type * as Https from "node:https"
import { delimiter, join } from "node:path"
import { AppConfig } from "../../layers/AppConfig.ts"
import { sha256Hex } from "../shared/Hash.ts"
import { NetworkPolicy } from "../shared/NetworkPolicy.ts"

/** A provider that refused the credential or the config, or could not be reached; `details` says which. */
export class ProviderCheckFailed extends Schema.TaggedError<ProviderCheckFailed>()("ProviderCheckFailed", {
  details: Schema.String
}) {
  override get message() {
    return this.details
  }
}

const fail = (details: string) => Effect.fail(new ProviderCheckFailed({ details }))

/** How long one request to a provider may take. */
const REQUEST_TIMEOUT = Duration.seconds(5)

/** Where a docker host's API is reached: a unix socket, or an http base URL for tcp://. */
const dockerTarget = (host: string) =>
  host.startsWith("unix://") || host.startsWith("/")
    ? { socketPath: host.replace(/^unix:\/\//, ""), baseUrl: "http://docker" }
    : { socketPath: undefined, baseUrl: host.replace(/^tcp:\/\//, "http://").replace(/\/+$/, "") }

const VersionBody = Schema.Struct({ Version: Schema.String, ApiVersion: Schema.String })
const ImageBody = Schema.Struct({ Id: Schema.String })

/** The first line of a Docker error body (`{"message": ...}`), for details. */
const dockerMessage = (text: string) => {
  try {
    const parsed = JSON.parse(text) as { message?: unknown }
    if (typeof parsed.message === "string") return parsed.message.slice(0, 300)
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300)
}

/** Whether `name` is an executable file in one of the PATH directories. */
const onPath = (name: string) =>
  Effect.promise(async () => {
    for (const dir of (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "")) {
      const candidate = join(dir, name)
      try {
        await access(candidate, constants.X_OK)
        return Option.some(candidate)
      } catch {
        // not here
      }
    }
    return Option.none<string>()
  })

export class ProviderChecks extends Effect.Service<ProviderChecks>()("ProviderChecks", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const policy = yield* NetworkPolicy

    /** Whether `value` is the operator's local provider key (compared in constant time). */
    const holdsLocalKey = (value: Redacted.Redacted<string>) =>
      Option.match(config.localProviderKey, {
        onNone: () => false,
        onSome: (key) =>
          timingSafeEqual(
            Buffer.from(sha256Hex(Redacted.value(value)), "hex"),
            Buffer.from(sha256Hex(Redacted.value(key)), "hex")
          )
      })

    const localEnabled = Option.isSome(config.localProviderKey)

    const local = (secretValue: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        if (!localEnabled) {
          return yield* fail(
            "The local provider is disabled on this server: the operator has not set AGENT_PLATFORM_LOCAL_PROVIDER_KEY"
          )
        }
        if (!holdsLocalKey(secretValue)) {
          return yield* fail(
            "The auth secret does not hold this server's local provider key (AGENT_PLATFORM_LOCAL_PROVIDER_KEY); " +
              "ask the operator for it and store it in the secret"
          )
        }
        const bwrap = yield* onPath("bwrap")
        return Option.match(bwrap, {
          onNone: () =>
            "The local provider key is accepted. bwrap (bubblewrap) is not installed on the server host: " +
            "machines would run without a sandbox",
          onSome: (path) => `The local provider key is accepted. bwrap is installed (${path}): machines run sandboxed`
        })
      })

    /** GET `path` on the Docker Engine API at `host`: the status and the body's text. */
    const dockerGet = (host: string, path: string) =>
      Effect.gen(function*() {
        const target = dockerTarget(host)
        const agentOptions = (target.socketPath !== undefined
          ? { socketPath: target.socketPath }
          : policy.lookup === undefined
          ? {}
          : { lookup: policy.lookup }) as Https.AgentOptions
        const client = yield* NodeHttpClient.make.pipe(
          Effect.provideServiceEffect(NodeHttpClient.HttpAgent, NodeHttpClient.makeAgent(agentOptions))
        )
        const response = yield* client.execute(HttpClientRequest.get(`${target.baseUrl}${path}`))
        const text = yield* response.text
        return { status: response.status, text }
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({
          duration: REQUEST_TIMEOUT,
          onTimeout: () =>
            new ProviderCheckFailed({ details: `The Docker Engine at ${host} did not answer GET ${path} within 5 seconds` })
        }),
        Effect.catchTag("RequestError", "ResponseError", (error) =>
          fail(`Cannot reach the Docker Engine at ${host} (GET ${path}): ${error.cause instanceof Error ? error.cause.message : error.message}`))
      )

    const docker = (host: string, image: string) =>
      Effect.gen(function*() {
        if (!host.startsWith("unix://") && !host.startsWith("/")) {
          yield* policy.checkTarget(dockerTarget(host).baseUrl).pipe(
            Effect.catchTag("PrivateNetworkTarget", (refused) => fail(`The Docker host ${host} is refused: ${refused.message}`))
          )
        }
        const ping = yield* dockerGet(host, "/_ping")
        if (ping.status !== 200) {
          return yield* fail(`The Docker Engine at ${host} answered /_ping with ${ping.status}: ${dockerMessage(ping.text)}`)
        }
        const versionResponse = yield* dockerGet(host, "/version")
        if (versionResponse.status !== 200) {
          return yield* fail(
            `The Docker Engine at ${host} answered /version with ${versionResponse.status}: ${dockerMessage(versionResponse.text)}`
          )
        }
        const version = yield* Schema.decodeUnknown(Schema.parseJson(VersionBody))(versionResponse.text).pipe(
          Effect.mapError(() =>
            new ProviderCheckFailed({ details: `The server at ${host} answered /version without a Docker version: is it a Docker Engine?` })
          )
        )
        const imageResponse = yield* dockerGet(host, `/images/${encodeURIComponent(image)}/json`)
        if (imageResponse.status === 404) {
          return yield* fail(
            `Docker ${version.Version} at ${host} does not have the image ${image}; pull or import it on the Docker host first`
          )
        }
        if (imageResponse.status !== 200) {
          return yield* fail(
            `Docker ${version.Version} at ${host} answered the image lookup of ${image} with ${imageResponse.status}: ` +
              dockerMessage(imageResponse.text)
          )
        }
        const found = yield* Schema.decodeUnknown(Schema.parseJson(ImageBody))(imageResponse.text).pipe(
          Effect.mapError(() => new ProviderCheckFailed({ details: `Docker at ${host} answered the image lookup of ${image} without an image id` }))
        )
        return `Docker ${version.Version} (API ${version.ApiVersion}) at ${host}; image ${image} is present (${found.Id})`
      })

    return { localEnabled, holdsLocalKey, local, docker } as const
  }),
  dependencies: [NetworkPolicy.Default]
}) {}
