/**
 * The address this server's daemons reach it at: AGENT_PLATFORM_SERVER_URL when the operator sets
 * it (a server behind a proxy, or machines on other hosts), else the listener's own address once
 * it listens (HttpApp sets it), with a wildcard host read as loopback. Pool machines' daemons are
 * started with it (docs/machine-pools.md).
 */
import { Context, Effect, Layer, Option, Ref } from "effect"
import { AppConfig } from "../../layers/AppConfig.ts"

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const listening = yield* Ref.make(Option.none<string>())

  /** Records the listener's host and port. */
  const listen = (host: string, port: number) => {
    const reachable = host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host
    return Ref.set(listening, Option.some(`http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`))
  }

  /** The base address for daemons, e.g. `http://127.0.0.1:8787`. */
  const url = Effect.map(Ref.get(listening), (listened) =>
    Option.getOrElse(Option.orElse(config.serverUrl, () => listened), () => `http://127.0.0.1:${config.port}`))

  return { listen, url } as const
})

export class ListenAddress extends Context.Service<ListenAddress, Effect.Success<typeof make>>()("ListenAddress") {
  static readonly layer = Layer.effect(this, make)
}
