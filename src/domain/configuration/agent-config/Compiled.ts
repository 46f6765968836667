/**
 * CompiledAgentConfig: the definition with names resolved to ids, defaults filled in
 * (built-in tools, max_depth, max_subagents, empty collections), model settings resolved, and
 * the overrides each subagent derives from its parent. Read-only; no additional properties.
 */
import { Schema } from "effect"
import { AgentConfigId, ConfiguredModelId, MachinePoolId, SecretId, SkillId } from "../../shared/Ids.ts"
import { CacheRetention } from "../Models.ts"
import { InteractionKind, JsonObject, ToolPermission } from "./Definition.ts"

export const CompiledAgentModel = Schema.Struct({
  configured_model_id: ConfiguredModelId,
  context_window_tokens: Schema.Int,
  default_max_output_tokens: Schema.optional(Schema.Int),
  cache_retention: CacheRetention,
  reasoning: Schema.Struct({ effort: Schema.optional(Schema.String) })
}).annotations({ identifier: "CompiledAgentModel" })
export type CompiledAgentModel = typeof CompiledAgentModel.Type

export const CompiledTool = Schema.Struct({
  enabled: Schema.Boolean,
  permission: ToolPermission,
  type: Schema.Literal("built_in", "custom"),
  description: Schema.optional(Schema.String),
  input_schema: Schema.optional(JsonObject)
}).annotations({ identifier: "CompiledTool" })
export type CompiledTool = typeof CompiledTool.Type

export const CompiledMcpServer = Schema.Struct({
  url: Schema.String,
  default_enabled: Schema.Boolean,
  permission: ToolPermission,
  auth: Schema.optional(Schema.Struct({ type: Schema.Literal("bearer"), secret_id: SecretId }))
}).annotations({ identifier: "CompiledMCPServer" })
export type CompiledMcpServer = typeof CompiledMcpServer.Type

export const CompiledMachineSource = Schema.Struct({
  machine_id: Schema.optional(Schema.String),
  machine_pool_id: Schema.optional(MachinePoolId),
  max_machines: Schema.optional(Schema.Int),
  initial_num_machines: Schema.optional(Schema.Int),
  delete_after_idle_minutes: Schema.optional(Schema.Int),
  cwd: Schema.optional(Schema.String),
  machine_cpu: Schema.optional(Schema.Int),
  machine_memory_mb: Schema.optional(Schema.Int),
  env_overlay: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) })),
  secret_env_overlay: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.NullOr(SecretId) })),
  machine_provider_options_overlay: Schema.optional(JsonObject),
  description: Schema.optional(Schema.String)
}).annotations({ identifier: "CompiledMachineSource" })
export type CompiledMachineSource = typeof CompiledMachineSource.Type

export const CompiledSkill = Schema.Struct({
  skill_id: SkillId,
  name: Schema.String,
  version: Schema.Int
}).annotations({ identifier: "CompiledSkill" })
export type CompiledSkill = typeof CompiledSkill.Type

export const CompiledMemoryStore = Schema.Struct({
  name: Schema.String,
  access: Schema.Literal("read_only", "read_write")
})
export type CompiledMemoryStore = typeof CompiledMemoryStore.Type

/** An inline subagent: the parts of a config a subagent can set, resolved like its parent's. */
export const CompiledInlineSubagent = Schema.Struct({
  instruction: Schema.String,
  model: CompiledAgentModel,
  tools: Schema.Record({ key: Schema.String, value: CompiledTool }),
  mcp: Schema.Record({ key: Schema.String, value: CompiledMcpServer }),
  skills: Schema.Array(CompiledSkill),
  machine_sources: Schema.Array(CompiledMachineSource)
}).annotations({ identifier: "CompiledInlineSubagent" })
export type CompiledInlineSubagent = typeof CompiledInlineSubagent.Type

export const CompiledSubagent = Schema.Struct({
  description: Schema.String,
  agent_config_id: Schema.optional(AgentConfigId),
  definition: Schema.optional(CompiledInlineSubagent),
  max_depth: Schema.Int.annotations({ description: "derived: the parent's max_depth minus one (capped by the referenced config's)" }),
  max_subagents: Schema.Int.annotations({ description: "derived: the parent's (capped by the referenced config's)" })
}).annotations({ identifier: "CompiledSubagent" })
export type CompiledSubagent = typeof CompiledSubagent.Type

export const CompiledEventWebhook = Schema.Struct({
  url: Schema.String,
  signing_secret_id: Schema.optional(SecretId)
})

export const CompiledGitCredentials = Schema.Struct({
  token_secret_id: SecretId,
  username: Schema.optional(Schema.String)
})

export const CompiledInteractionHandler = Schema.Struct({
  type: Schema.Literal("webhook"),
  url: Schema.String,
  interactions: Schema.Array(InteractionKind)
})

export const CompiledAgentConfig = Schema.Struct({
  version: Schema.optional(Schema.String),
  instruction: Schema.String,
  model: CompiledAgentModel,
  machine_sources: Schema.optional(Schema.Array(CompiledMachineSource)),
  tools: Schema.optional(Schema.Record({ key: Schema.String, value: CompiledTool })),
  mcp: Schema.optional(Schema.Record({ key: Schema.String, value: CompiledMcpServer })),
  event_webhook: Schema.optional(CompiledEventWebhook),
  interaction_handlers: Schema.optional(Schema.Record({ key: Schema.String, value: CompiledInteractionHandler })),
  git_credentials: Schema.optional(CompiledGitCredentials),
  skills: Schema.optional(Schema.Array(CompiledSkill)),
  memory_stores: Schema.optional(Schema.Array(CompiledMemoryStore)),
  subagents: Schema.optional(Schema.Record({ key: Schema.String, value: CompiledSubagent })),
  max_subagents: Schema.optional(Schema.Int),
  max_depth: Schema.optional(Schema.Int)
}).annotations({ identifier: "CompiledAgentConfig" })
export type CompiledAgentConfig = typeof CompiledAgentConfig.Type
