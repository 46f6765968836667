/**
 * The workflow engine alone, as the server sets it up on one process (`ClusterWorkflowEngine` on
 * one runner, its messages on the database, the server's sharding settings), for tests of the
 * engine's patched behaviour (docs/dependencies.md) with its message storage watched or changed.
 */
import { ClusterWorkflowEngine, MessageStorage, RunnerHealth, Runners, RunnerStorage, Sharding, ShardingConfig, SqlMessageStorage } from "effect/cluster"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Effect, Layer } from "effect"
import { workflowShardingConfig } from "../../src/layers/WorkflowEngine.ts"

/** The message storage on the database, with the operations `replace` returns (given the originals) in place of its own. */
export const storageWith = (
  replace: (storage: MessageStorage.MessageStorage["Service"]) => Partial<MessageStorage.MessageStorage["Service"]>
) =>
  Layer.effect(
    MessageStorage.MessageStorage,
    Effect.map(MessageStorage.MessageStorage, (storage) => MessageStorage.MessageStorage.of({ ...storage, ...replace(storage) }))
  ).pipe(Layer.provide(SqlMessageStorage.layer))

/** One owner of `workflows`: the engine on one runner over the database, with `storage` as its message storage. */
export const workflowOwner = <A, E, R>(
  workflows: Layer.Layer<A, E, R>,
  storage: ReturnType<typeof storageWith>
) =>
  workflows.pipe(
    Layer.provideMerge(ClusterWorkflowEngine.layer),
    Layer.provideMerge(Sharding.layer),
    Layer.provide(Runners.layerNoop),
    Layer.provideMerge(storage),
    Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop, NodeCrypto.layerDigest]),
    Layer.provide(ShardingConfig.layer(workflowShardingConfig))
  )
