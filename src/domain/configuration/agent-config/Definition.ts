/**
 * AgentConfigDefinition (docs/agent-configs.md): the document a config source holds.
 * No object in it takes properties it does not list. Maps keyed by name: `tools`, `mcp`,
 * `subagents`, `interaction_handlers`; lists: `machine_sources`, `skills`, `memory_stores`.
 *
 * This schema checks shapes and the bounds one field can check alone; what needs other fields or
 * the database (names that resolve, narrowing of the model, built-in tool names) is checked when
 * compiling (Compile.ts).
 */
import { Schema } from "effect"
import { optional } from "../../shared/Optional.ts"
import { AgentConfigId, MachinePoolId, SkillId } from "../../shared/Ids.ts"
import { CacheRetention, MAX_INT } from "../Models.ts"
import { EnvRecord } from "../../shared/EnvName.ts"
import { ResourceName } from "../../shared/ResourceName.ts"

export const MAX_DEPTH = { min: 1, max: 8, default: 3 } as const
export const MAX_SUBAGENTS = { min: 1, max: MAX_INT, default: 8 } as const
export const DEFINITION_VERSION = "v1"

const between = (min: number, max: number) =>
  Schema.Int.pipe(
    Schema.check(Schema.makeFilter((n) => n >= min && n <= max, { message: `must be an integer from ${min} to ${max}` }))
  )

const NonEmptyText = Schema.String.pipe(Schema.check(Schema.isMinLength(1, { message: "must not be empty" })))

/** A JSON value: what a JSON document can hold (no infinities or NaN, which YAML could produce). */
export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | { readonly [key: string]: JsonValue }
export const JsonValue: Schema.Codec<JsonValue> = Schema.Union([
  Schema.Null,
  Schema.Boolean,
  Schema.Number.pipe(Schema.check(Schema.isFinite({ message: "must be a finite number" }))),
  Schema.String,
  Schema.Array(Schema.suspend(() => JsonValue)),
  Schema.Record(Schema.String, Schema.suspend(() => JsonValue))
]).annotate({ identifier: "JsonValue" })
export const JsonObject = Schema.Record(Schema.String, JsonValue)

/** Names of tools, MCP servers, subagents and interaction handlers. */
export const KEY_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/u
export const Key = Schema.String.pipe(
  Schema.check(Schema.isPattern(KEY_PATTERN, { message: "must be 1 to 64 characters of a-z, A-Z, 0-9, _ or -" }))
)

export const HttpUrl = Schema.String.pipe(
  Schema.check(Schema.makeFilter((text) => {
    if (!URL.canParse(text)) return "must be an absolute http(s) URL"
    const url = new URL(text)
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https"
    if (url.username !== "" || url.password !== "") return "must not carry credentials; reference a secret"
    return true
  }))
)

/** Whether a tool runs without asking (`allow`) or waits for an approval first (`ask`). */
export const ToolPermission = Schema.Literals(["allow", "ask"]).annotate({ message: 'must be "allow" or "ask"' })
export type ToolPermission = typeof ToolPermission.Type

export const Instruction = Schema.String.pipe(
  Schema.check(Schema.makeFilter((text) => /\S/u.test(text) || "must contain a non-whitespace character"))
)

export const ModelReference = Schema.Struct({
  provider_config: ResourceName,
  name: ResourceName,
  context_window_tokens: optional(between(1, MAX_INT)),
  max_output_tokens: optional(between(1, MAX_INT)),
  cache_retention: optional(
    CacheRetention.annotate({ message: 'must be "none", "short" or "long"' })
  ),
  reasoning: optional(Schema.Struct({ effort: NonEmptyText }))
})
export type ModelReference = typeof ModelReference.Type

/** A custom tool (`type: custom`) or the override of a built-in one (`type` omitted or `built_in`). */
export const ToolEntry = Schema.Struct({
  type: optional(
    Schema.Literals(["built_in", "custom"]).annotate({ message: 'must be "built_in" or "custom"' })
  ),
  enabled: optional(Schema.Boolean),
  permission: optional(ToolPermission),
  description: optional(NonEmptyText),
  input_schema: optional(JsonObject)
})
export type ToolEntry = typeof ToolEntry.Type

export const MachineSource = Schema.Struct({
  machine_id: optional(NonEmptyText),
  machine_pool_id: optional(MachinePoolId),
  max_machines: optional(between(1, MAX_INT)),
  initial_num_machines: optional(between(0, MAX_INT)),
  delete_after_idle_minutes: optional(between(5, MAX_INT)),
  cwd: optional(NonEmptyText),
  machine_cpu: optional(between(1, MAX_INT)),
  machine_memory_mb: optional(between(1, MAX_INT)),
  env_overlay: optional(EnvRecord(Schema.NullOr(Schema.String))),
  secret_env_overlay: optional(EnvRecord(Schema.NullOr(ResourceName))),
  machine_provider_options_overlay: optional(JsonObject),
  description: optional(Schema.String)
})
export type MachineSource = typeof MachineSource.Type

export const McpServer = Schema.Struct({
  url: HttpUrl,
  default_enabled: optional(Schema.Boolean),
  permission: optional(ToolPermission),
  auth: optional(
    Schema.Struct({ type: Schema.Literal("bearer"), secret: ResourceName })
  )
})
export type McpServer = typeof McpServer.Type

/** A skill by name (owned by the project, personal to the caller, or granted) or by id. */
export const SkillReference = Schema.Struct({
  name: optional(ResourceName),
  id: optional(SkillId),
  version: optional(between(1, MAX_INT))
})
export type SkillReference = typeof SkillReference.Type

export const MemoryStore = Schema.Struct({
  name: ResourceName,
  access: optional(
    Schema.Literals(["read_only", "read_write"]).annotate({ message: 'must be "read_only" or "read_write"' })
  )
})
export type MemoryStore = typeof MemoryStore.Type

/** A subagent: another config of the project (`agent_config_id`) or inline (`instruction`, ...). */
export const Subagent = Schema.Struct({
  description: NonEmptyText,
  agent_config_id: optional(AgentConfigId),
  instruction: optional(Instruction),
  model: optional(ModelReference),
  tools: optional(Schema.Record(Key, ToolEntry)),
  mcp: optional(Schema.Record(Key, McpServer)),
  skills: optional(Schema.Array(SkillReference)),
  machine_sources: optional(Schema.Array(MachineSource))
})
export type Subagent = typeof Subagent.Type

export const EventWebhook = Schema.Struct({
  url: HttpUrl,
  signing_secret: optional(ResourceName)
})

export const GitCredentials = Schema.Struct({
  token_secret: ResourceName,
  username: optional(NonEmptyText)
})

export const InteractionKind = Schema.Literals(["approval", "question"]).annotate({
  message: 'must be "approval" or "question"'
})
export const InteractionHandler = Schema.Struct({
  type: Schema.Literal("webhook"),
  url: HttpUrl,
  interactions: optional(
    Schema.Array(InteractionKind).pipe(Schema.check(Schema.isMinLength(1, { message: "must list at least one kind" })))
  )
})

export const AgentConfigDefinition = Schema.Struct({
  instruction: Instruction,
  model: ModelReference,
  version: optional(
    Schema.Literal(DEFINITION_VERSION).annotate({ message: `must be "${DEFINITION_VERSION}", the only version` })
  ),
  machine_sources: optional(Schema.Array(MachineSource)),
  tools: optional(Schema.Record(Key, ToolEntry)),
  mcp: optional(Schema.Record(Key, McpServer)),
  skills: optional(Schema.Array(SkillReference)),
  memory_stores: optional(Schema.Array(MemoryStore)),
  subagents: optional(Schema.Record(Key, Subagent)),
  event_webhook: optional(EventWebhook),
  git_credentials: optional(GitCredentials),
  interaction_handlers: optional(Schema.Record(Key, InteractionHandler)),
  max_depth: optional(between(MAX_DEPTH.min, MAX_DEPTH.max)),
  max_subagents: optional(between(MAX_SUBAGENTS.min, MAX_SUBAGENTS.max))
}).annotate({
  identifier: "AgentConfigDefinition",
  description: "The agent config document (docs/agent-configs.md)"
})
export type AgentConfigDefinition = typeof AgentConfigDefinition.Type
