/**
 * Read-only checks of a machine provider's credential and config (check-connection,
 * docs/machine-pools.md): for `docker`, the Docker Engine API at the pool's host (ping, version,
 * the image present); for `local`, the operator's key and whether bubblewrap is installed. A
 * check that fails says why in `details` (`unprocessable`).
 */
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import { constants } from "node:fs"
import { access } from "node:fs/promises"
import { delimiter, join } from "node:path"
import { AppConfig } from "../../layers/AppConfig.ts"
import { sha256Hex } from "../shared/Hash.ts"
import { NetworkPolicy } from "../shared/NetworkPolicy.ts"
import { dockerMessage, dockerRequest, dockerTarget, isSocketHost } from "./providers/DockerEngine.ts"

/** A provider that refused the credential or the config, or could not be reached; `details` says which. */
export class ProviderCheckFailed extends Schema.TaggedError<ProviderCheckFailed>()("ProviderCheckFailed", {
  details: Schema.String
}) {
  override get message() {
    return this.details
  }
}

const fail = (details: string) => Effect.fail(new ProviderCheckFailed({ details }))

const VersionBody = Schema.Struct({ Version: Schema.String, ApiVersion: Schema.String })
const ImageBody = Schema.Struct({ Id: Schema.String })

/** Whether `name` is an executable file in one of the PATH directories. */
export const onPath = (name: string) =>
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

const make = Effect.gen(function*() {
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

  /**
   * Why a `local` pool whose auth secret holds `secretValue` may not run machines on this host
   * now: the operator has not set the key (or no longer does), or the secret does not hold it.
   */
  const localRefusal = (secretValue: Redacted.Redacted<string>): Option.Option<string> =>
    !localEnabled
      ? Option.some("The local provider is disabled on this server: the operator has not set AGENT_PLATFORM_LOCAL_PROVIDER_KEY")
      : !holdsLocalKey(secretValue)
      ? Option.some(
        "The auth secret does not hold this server's local provider key (AGENT_PLATFORM_LOCAL_PROVIDER_KEY); " +
          "ask the operator for it and store it in the secret"
      )
      : Option.none()

  const local = (secretValue: Redacted.Redacted<string>) =>
    Effect.gen(function*() {
      const refusal = localRefusal(secretValue)
      if (Option.isSome(refusal)) return yield* fail(refusal.value)
      const bwrap = yield* onPath("bwrap")
      return Option.match(bwrap, {
        onNone: () =>
          "The local provider key is accepted. bwrap (bubblewrap) is not installed on the server host: " +
          "machines would run without a sandbox",
        onSome: (path) => `The local provider key is accepted. bwrap is installed (${path}): machines run sandboxed`
      })
    })

  /** GET `path` on the Docker Engine API at `host` (5 s): the status and the body's text. */
  const dockerGet = (host: string, path: string) =>
    dockerRequest(host, { method: "GET", path, lookup: policy.lookup }).pipe(
      Effect.catchTag("DockerUnreachable", (unreachable) => fail(unreachable.details))
    )

  const docker = (host: string, image: string) =>
    Effect.gen(function*() {
      if (!isSocketHost(host)) {
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
      const version = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(VersionBody))(versionResponse.text).pipe(
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
      const found = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(ImageBody))(imageResponse.text).pipe(
        Effect.mapError(() => new ProviderCheckFailed({ details: `Docker at ${host} answered the image lookup of ${image} without an image id` }))
      )
      return `Docker ${version.Version} (API ${version.ApiVersion}) at ${host}; image ${image} is present (${found.Id})`
    })

  return { localEnabled, holdsLocalKey, localRefusal, local, docker } as const
})

export class ProviderChecks extends Context.Service<ProviderChecks, Effect.Success<typeof make>>()("ProviderChecks") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(NetworkPolicy.layer))
}
