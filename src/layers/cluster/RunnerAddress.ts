/**
 * Where this process's cluster runner listens and how the other server processes reach it
 * (docs/scale-out.md). Only used on Postgres, where several processes share the database.
 *
 * - RUNNER_HOST: the address the other processes connect to. Default: HOST, or this machine's
 *   host name when HOST is a wildcard (0.0.0.0, ::), which is not an address anyone can dial.
 *   The runner listens on RUNNER_HOST when it is set, else on HOST.
 * - RUNNER_PORT: default PORT + 1. 0 takes any free port; the port actually bound is the one
 *   registered for the others (tests and benchmarks, where PORT is 0 too, use this).
 *
 * The runner protocol has no authentication: the runner port must be reachable only by the other
 * server processes.
 */
import { Config, Effect, Option } from "effect"
import { hostname } from "node:os"
import { AppConfig, integer, invalidData } from "../AppConfig.ts"

export interface RunnerAddressConfig {
  /** The host name or address registered for the other runners to dial. */
  readonly advertisedHost: string
  /** The interface the runner's socket server binds. */
  readonly listenHost: string
  /** 0: any free port. */
  readonly port: number
}

const WILDCARD_HOSTS: ReadonlySet<string> = new Set(["0.0.0.0", "::", "[::]"])

const portNumber = (name: string) =>
  integer(name).pipe(
    Config.mapEffect((port) =>
      port >= 0 && port <= 65_535
        ? Effect.succeed(port)
        : Effect.fail(invalidData(name, `${name} must be a port number from 0 to 65535, got ${port}`))
    )
  )

export const runnerAddressConfig = Effect.gen(function*() {
  const app = yield* AppConfig
  const explicitHost = yield* Config.option(Config.NonEmptyString("RUNNER_HOST"))
  const explicitPort = yield* Config.option(portNumber("RUNNER_PORT"))
  const defaultPort = app.port === 0 ? 0 : app.port + 1
  if (defaultPort > 65_535 && Option.isNone(explicitPort)) {
    return yield* Effect.fail(
      invalidData("RUNNER_PORT", `PORT ${app.port} leaves no port above it for the runner: set RUNNER_PORT`)
    )
  }
  const config: RunnerAddressConfig = {
    advertisedHost: Option.getOrElse(explicitHost, () => WILDCARD_HOSTS.has(app.host) ? hostname() : app.host),
    listenHost: Option.getOrElse(explicitHost, () => app.host),
    port: Option.getOrElse(explicitPort, () => defaultPort)
  }
  return config
})
