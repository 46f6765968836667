/**
 * The agent runtime's composition (docs/runtime.md): the workflow engine over the application's
 * database, the turn workflow registered on it, and AgentRuntime, which recovers unfinished work
 * once the workflow is registered. Needs the SQL client, Timeline, Models and Secrets.
 */
import { Effect, Layer, Option } from "effect"
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

export const RuntimeLive = AgentRuntime.Default.pipe(
  Layer.provide(TurnWorkflowLive),
  Layer.provideMerge(TurnServicesLive)
)
