/**
 * The runtime capability (docs/runtime.md): the services of the agents API, and the turn engine
 * on the durable workflow engine: the turn workflow is registered first, then the recovery of
 * what a stopped process left unfinished runs, before the server listens. The pruning of finished
 * turns' journals runs beside it (docs/runtime.md, "Pruning the engine's tables").
 */
import { Layer } from "effect"
import { WorkflowEngineLive } from "../../layers/WorkflowEngine.ts"
import { Actors } from "./Actors.ts"
import { AgentControl } from "./AgentControl.ts"
import { AgentEvents } from "./AgentEvents.ts"
import { AgentInputs } from "./AgentInputs.ts"
import { Agents } from "./Agents.ts"
import { Artifacts } from "./Artifacts.ts"
import { Interactions } from "./Interactions.ts"
import { StreamTokens } from "./StreamTokens.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCalls } from "./ToolCalls.ts"
import { TurnJournalPruningLive } from "./TurnJournalPruning.ts"
import { TurnRecoveryLive } from "./TurnRecovery.ts"
import { Turns } from "./Turns.ts"
import { TurnSteps } from "./TurnSteps.ts"
import { TurnWaits } from "./TurnWaits.ts"
import { TurnWorkflowLive } from "./TurnWorkflowLive.ts"

/** The turn workflow registered on the engine, then the start-up recovery (in that order); and the workflows' waits in memory. */
const TurnEngineLive = TurnRecoveryLive.pipe(
  Layer.provide(TurnWorkflowLive.pipe(Layer.provide(TurnSteps.layer))),
  Layer.provideMerge(TurnWaits.layer)
)

export const RuntimeLive = Layer.mergeAll(
  Agents.layer,
  AgentInputs.layer,
  AgentControl.layer,
  AgentEvents.layer,
  Turns.layer,
  ToolCalls.layer,
  Interactions.layer,
  Actors.layer,
  Artifacts.layer,
  StreamTokens.layer,
  Timeline.layer,
  TurnEngineLive,
  TurnJournalPruningLive
).pipe(Layer.provideMerge(WorkflowEngineLive))
