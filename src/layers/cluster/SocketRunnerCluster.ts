/**
 * The cluster on a shared Postgres (docs/scale-out.md): every server process is a runner of
 * `effect/cluster`, registered in `cluster_runners`, holding its shards with Postgres advisory
 * locks (`SqlRunnerStorage`), its messages and the workflow journals in `cluster_messages` /
 * `cluster_replies` (`SqlMessageStorage`), and talking to the other runners over TCP sockets
 * (the parts of `SocketRunner`, with `@effect/platform-node`'s socket server and client).
 *
 * Sockets rather than HTTP: one persistent connection per pair of runners carrying binary
 * frames (Effect's schema-driven binary serialization, which `NodeClusterSocket.layer` uses too), no HTTP parsing per message, and a port of its own, so the runner protocol (which has no
 * authentication) is never served on the public API port.
 *
 * Assembled here rather than with `NodeClusterSocket.layer` for two reasons: the runner's address
 * is known only once its socket listens (RUNNER_PORT=0 takes any free port), and SocketRunner logs
 * "Listening on: host:port", which would read as the HTTP server being up.
 */
import { RunnerAddress, RunnerHealth, Runners, RunnerServer, ShardingConfig, SqlMessageStorage, SqlRunnerStorage } from "effect/cluster"
import { NetAddress } from "effect/net"
import { SocketServer } from "effect/socket"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { RpcSerialization, RpcServer } from "effect/rpc"
import { Data, Effect, Layer, Option } from "effect"
import { PipelinedStatements } from "../../services/shared/PipelinedStatements.ts"
import { withStartupLock } from "../StartupLock.ts"
import { type RunnerAddressConfig, runnerAddressConfig } from "./RunnerAddress.ts"

export class RunnerAddressUnavailable extends Data.TaggedError("RunnerAddressUnavailable")<{
  readonly message: string
}> {}

/** Listens on the configured runner address; fails with a message naming the settings to change. */
const runnerSocket = (address: RunnerAddressConfig) =>
  NodeSocketServer.layer({ host: address.listenHost, port: address.port }).pipe(
    Layer.catchTag("SocketServerError", (error) =>
      Layer.effect(SocketServer.SocketServer, Effect.fail(
        new RunnerAddressUnavailable({
          message: `The cluster runner could not listen on ${address.listenHost}:${address.port} ` +
            `(${String(error.cause)}). Set RUNNER_PORT, and RUNNER_HOST if needed, to a free address of this ` +
            "machine that the other server processes can reach (docs/scale-out.md)."
        })
      ))
    )
  )

/** The sharding settings, with this runner's address: the advertised host and the port its socket bound. */
const shardingConfig = (address: RunnerAddressConfig, settings: Partial<ShardingConfig.ShardingConfig["Service"]>) =>
  Layer.effect(
    ShardingConfig.ShardingConfig,
    Effect.gen(function*() {
      const server = yield* SocketServer.SocketServer
      if (!NetAddress.isInetAddress(server.address)) return yield* Effect.die(new Error("The runner socket is not a TCP socket"))
      const self = RunnerAddress.RunnerAddress.make({ host: address.advertisedHost, port: server.address.port })
      const fromEnv = yield* ShardingConfig.configFromEnv
      yield* Effect.logInfo(`Cluster runner ${self.host}:${self.port} (bound on ${NetAddress.formatHost(server.address)})`)
      return { ...fromEnv, ...settings, runnerAddress: Option.some(self), runnerListenAddress: Option.none() }
    })
  )

/**
 * The storage tables are created (when missing) one process at a time: src/layers/StartupLock.ts.
 * The message storage's statements that commit alone (a message's insert, a reply's store, one
 * each a turn) run pipelined outside a transaction, as the application's own do
 * (PipelinedStatements).
 */
const StorageLive = Layer.effectContext(Effect.gen(function*() {
  const pipelined = yield* PipelinedStatements
  const storage = Layer.merge(
    SqlMessageStorage.layerWith({ runAlone: pipelined.run }),
    Layer.orDie(SqlRunnerStorage.layer)
  )
  return yield* withStartupLock(Layer.buildWithScope(storage, yield* Effect.scope))
}))

/** Pings the runners the storage lists, so that a dead one is marked unhealthy and its shards move. */
const RunnerHealthLive = RunnerHealth.layerPing.pipe(
  Layer.provide(Runners.layerRpc),
  Layer.provide(NodeClusterSocket.layerClientProtocol)
)

/** `Sharding` and `MessageStorage` of this process as one runner of the cluster. */
export const socketRunnerCluster = (settings: Partial<ShardingConfig.ShardingConfig["Service"]>) =>
  Layer.unwrap(Effect.map(runnerAddressConfig, (address) =>
    RunnerServer.layerWithClients.pipe(
      Layer.provide(RpcServer.layerProtocolSocketServer),
      Layer.provide(Layer.merge(NodeClusterSocket.layerClientProtocol, RunnerHealthLive)),
      Layer.provideMerge(StorageLive),
      Layer.provideMerge(shardingConfig(address, settings)),
      Layer.provide(runnerSocket(address)),
      Layer.provide(RpcSerialization.layerSchemaBinary())
    )))
