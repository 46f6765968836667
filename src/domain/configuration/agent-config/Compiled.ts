/**
 * CompiledAgentConfig: the definition with names resolved to ids, defaults filled in
 * (built-in tools, max_depth, max_subagents, empty collections), model settings resolved, and
 * the overrides each subagent derives from its parent. Read-only; no additional properties.
 */
import { Schema } from "effect"
import { optional } from "../../shared/Optional.ts"
import { AgentConfigId, ConfiguredModelId, MachinePoolId, SecretId, SkillId } from "../../shared/Ids.ts"
import { CacheRetention } from "../Models.ts"
import { InteractionKind, JsonObject, ToolPermission } from "./Definition.ts"

export const CompiledAgentModel = Schema.Struct({
  configured_model_id: ConfiguredModelId,
  context_window_tokens: Schema.Int,
  default_max_output_tokens: optional(Schema.Int),
  cache_retention: CacheRetention,
  reasoning: Schema.Struct({ effort: optional(Schema.String) })
}).annotate({ identifier: "CompiledAgentModel" })
export type CompiledAgentModel = typeof CompiledAgentModel.Type

export const CompiledTool = Schema.Struct({
  enabled: Schema.Boolean,
  permission: ToolPermission,
  type: Schema.Literals(["built_in", "custom"]),
  description: optional(Schema.String),
  input_schema: optional(JsonObject)
}).annotate({ identifier: "CompiledTool" })
export type CompiledTool = typeof CompiledTool.Type

export const CompiledMcpServer = Schema.Struct({
  url: Schema.String,
  default_enabled: Schema.Boolean,
  permission: ToolPermission,
  auth: optional(Schema.Struct({ type: Schema.Literal("bearer"), secret_id: SecretId }))
}).annotate({ identifier: "CompiledMCPServer" })
export type CompiledMcpServer = typeof CompiledMcpServer.Type

export const CompiledMachineSource = Schema.Struct({
  machine_id: optional(Schema.String),
  machine_pool_id: optional(MachinePoolId),
  max_machines: optional(Schema.Int),
  initial_num_machines: optional(Schema.Int),
  delete_after_idle_minutes: optional(Schema.Int),
  cwd: optional(Schema.String),
  machine_cpu: optional(Schema.Int),
  machine_memory_mb: optional(Schema.Int),
  env_overlay: optional(Schema.Record(Schema.String, Schema.NullOr(Schema.String))),
  secret_env_overlay: optional(Schema.Record(Schema.String, Schema.NullOr(SecretId))),
  machine_provider_options_overlay: optional(JsonObject),
  description: optional(Schema.String)
}).annotate({ identifier: "CompiledMachineSource" })
export type CompiledMachineSource = typeof CompiledMachineSource.Type

export const CompiledSkill = Schema.Struct({
  skill_id: SkillId,
  name: Schema.String,
  version: Schema.Int
}).annotate({ identifier: "CompiledSkill" })
export type CompiledSkill = typeof CompiledSkill.Type

export const CompiledMemoryStore = Schema.Struct({
  name: Schema.String,
  access: Schema.Literals(["read_only", "read_write"])
})
export type CompiledMemoryStore = typeof CompiledMemoryStore.Type

/** An inline subagent: the parts of a config a subagent can set, resolved like its parent's. */
export const CompiledInlineSubagent = Schema.Struct({
  instruction: Schema.String,
  model: CompiledAgentModel,
  tools: Schema.Record(Schema.String, CompiledTool),
  mcp: Schema.Record(Schema.String, CompiledMcpServer),
  skills: Schema.Array(CompiledSkill),
  machine_sources: Schema.Array(CompiledMachineSource)
}).annotate({ identifier: "CompiledInlineSubagent" })
export type CompiledInlineSubagent = typeof CompiledInlineSubagent.Type

export const CompiledSubagent = Schema.Struct({
  description: Schema.String,
  agent_config_id: optional(AgentConfigId),
  definition: optional(CompiledInlineSubagent),
  max_depth: Schema.Int.annotate({ description: "derived: the parent's max_depth minus one (capped by the referenced config's)" }),
  max_subagents: Schema.Int.annotate({ description: "derived: the parent's (capped by the referenced config's)" })
}).annotate({ identifier: "CompiledSubagent" })
export type CompiledSubagent = typeof CompiledSubagent.Type

export const CompiledEventWebhook = Schema.Struct({
  url: Schema.String,
  signing_secret_id: optional(SecretId)
})

export const CompiledGitCredentials = Schema.Struct({
  token_secret_id: SecretId,
  username: optional(Schema.String)
})

export const CompiledInteractionHandler = Schema.Struct({
  type: Schema.Literal("webhook"),
  url: Schema.String,
  interactions: Schema.Array(InteractionKind)
})

export const CompiledAgentConfig = Schema.Struct({
  version: optional(Schema.String),
  instruction: Schema.String,
  model: CompiledAgentModel,
  machine_sources: optional(Schema.Array(CompiledMachineSource)),
  tools: optional(Schema.Record(Schema.String, CompiledTool)),
  mcp: optional(Schema.Record(Schema.String, CompiledMcpServer)),
  event_webhook: optional(CompiledEventWebhook),
  interaction_handlers: optional(Schema.Record(Schema.String, CompiledInteractionHandler)),
  git_credentials: optional(CompiledGitCredentials),
  skills: optional(Schema.Array(CompiledSkill)),
  memory_stores: optional(Schema.Array(CompiledMemoryStore)),
  subagents: optional(Schema.Record(Schema.String, CompiledSubagent)),
  max_subagents: optional(Schema.Int),
  max_depth: optional(Schema.Int)
}).annotate({ identifier: "CompiledAgentConfig" })
export type CompiledAgentConfig = typeof CompiledAgentConfig.Type

/** The secrets a compiled config uses (its inline subagents' too), each once. */
export const secretIdsOf = (compiled: CompiledAgentConfig): Array<SecretId> => {
  const inline = Object.values(compiled.subagents ?? {}).flatMap((sub) => sub.definition === undefined ? [] : [sub.definition])
  const ofSources = (sources: ReadonlyArray<CompiledMachineSource> | undefined) =>
    (sources ?? []).flatMap((source) => Object.values(source.secret_env_overlay ?? {}).filter((id) => id !== null))
  const ofMcp = (servers: Readonly<Record<string, CompiledMcpServer>> | undefined) =>
    Object.values(servers ?? {}).flatMap((server) => server.auth === undefined ? [] : [server.auth.secret_id])
  return Array.from(
    new Set([
      ...ofSources(compiled.machine_sources),
      ...ofMcp(compiled.mcp),
      ...(compiled.event_webhook?.signing_secret_id === undefined ? [] : [compiled.event_webhook.signing_secret_id]),
      ...(compiled.git_credentials === undefined ? [] : [compiled.git_credentials.token_secret_id]),
      ...inline.flatMap((sub) => [...ofSources(sub.machine_sources), ...ofMcp(sub.mcp)])
    ])
  )
}
