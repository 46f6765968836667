/**
 * The agent runtime's composition (docs/runtime.md): the workflow engine over the application's
 * database, the turn workflow registered on it, and AgentRuntime, which recovers unfinished work
 * once the workflow is registered, and again every RECOVERY_SWEEP_INTERVAL on one process of the
 * cluster (a cluster singleton): a process that dies right after a commit leaves what should have
 * followed it undone, and on a shared database the others go on without restarting.
 * Needs the SQL client, Timeline, Models and Secrets.
 */
import { Singleton } from "@effect/cluster"
import { Duration, Effect, Layer, Option } from "effect"
import { AgentRuntime } from "../services/runtime/AgentRuntime.ts"
import { EventNotifications } from "../services/runtime/EventNotifications.ts"
import { ModelClient } from "../services/runtime/ModelClient.ts"
import { ToolDispatch } from "../services/runtime/ToolDispatch.ts"
import { TurnCancellation } from "../services/runtime/TurnCancellation.ts"
import { TurnLauncher } from "../services/runtime/TurnLauncher.ts"
import { TurnLifecycle } from "../services/runtime/TurnLifecycle.ts"
import { TurnSteps } from "../services/runtime/TurnSteps.ts"
import { Timeline } from "../services/runtime/Timeline.ts"
import { TurnWorkflowLive } from "../services/runtime/TurnWorkflowLive.ts"
import { AppConfig } from "./AppConfig.ts"
import { WorkflowEngineLive } from "./WorkflowEngine.ts"

/** The timeline, its streams woken across processes on Postgres (docs/scale-out.md). */
export const TimelineLive = Timeline.Default.pipe(
  Layer.provide(Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
    Option.isSome(config.databaseUrl) ? EventNotifications.shared : EventNotifications.inProcess)))
)

const TurnServicesLive = TurnSteps.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(ToolDispatch.Default, TurnCancellation.Default, TurnLifecycle.Default)),
  Layer.provideMerge(Layer.merge(TurnLauncher.Default, ModelClient.Default)),
  Layer.provideMerge(WorkflowEngineLive)
)

export const RECOVERY_SWEEP_INTERVAL = Duration.seconds(30)

const RecoverySweepLive = Singleton.make(
  "AgentRuntime/RecoverySweep",
  Effect.flatMap(AgentRuntime, (runtime) =>
    runtime.recover.pipe(
      Effect.catchAllCause((cause) => Effect.logError("The recovery sweep failed", cause)),
      Effect.delay(RECOVERY_SWEEP_INTERVAL),
      Effect.forever
    ))
)

export const RuntimeLive = RecoverySweepLive.pipe(
  Layer.provideMerge(AgentRuntime.Default),
  Layer.provide(TurnWorkflowLive),
  Layer.provideMerge(TurnServicesLive)
)
