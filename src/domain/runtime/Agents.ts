/** Agents: an agent runs an agent config of its project, one turn at a time. */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { AgentConfigId, AgentId, OrgId, ProjectId, TurnId } from "../shared/Ids.ts"
import { Metadata } from "../shared/Metadata.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { InputAccepted, SendInput } from "./Inputs.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** idle: nothing to do; running: a turn is working; waiting: a turn waits for a tool result, an approval or an answer. */
export const AgentStatus = Schema.Literals(["idle", "running", "waiting"])
export type AgentStatus = typeof AgentStatus.Type

export class Agent extends Schema.Class<Agent>("Agent")({
  id: AgentId,
  org_id: OrgId,
  project_id: ProjectId,
  agent_config_id: AgentConfigId,
  name: Schema.NullOr(Schema.String),
  metadata: JsonObject,
  status: AgentStatus,
  current_turn_id: Schema.NullOr(TurnId),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export const LaunchAgent = Schema.Struct({
  agent_config_id: AgentConfigId,
  name: optional(ResourceName),
  metadata: optional(Metadata),
  input: optional(SendInput)
})
export type LaunchAgent = typeof LaunchAgent.Type

/** The answer to a launch: the agent, and, when it was launched with an input, the answer to that input. */
export class LaunchedAgent extends Schema.Class<LaunchedAgent>("LaunchedAgent")({
  ...Agent.fields,
  input: optional(InputAccepted)
}) {}

export const Control = Schema.Struct({
  control_type: Schema.Literal("cancel_current"),
  turn_id: optional(TurnId).annotate({
    description: "The turn to cancel: when it is no longer the current turn, nothing is cancelled " +
      "(state_transition_conflict), so a retried request does not cancel the turn that came next"
  })
})
export type Control = typeof Control.Type
