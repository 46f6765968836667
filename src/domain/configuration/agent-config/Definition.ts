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
import { AgentConfigId, MachinePoolId, SkillId } from "../../shared/Ids.ts"
import { CacheRetention, MAX_INT } from "../Models.ts"
import { ResourceName } from "../../shared/ResourceName.ts"
import { strict } from "../../shared/Strict.ts"

export const MAX_DEPTH = { min: 1, max: 8, default: 3 } as const
export const MAX_SUBAGENTS = { min: 1, max: MAX_INT, default: 8 } as const
export const DEFINITION_VERSION = "v1"

const between = (min: number, max: number) =>
  Schema.Int.pipe(
    Schema.filter((n) => (n >= min && n <= max) || `must be an integer from ${min} to ${max}`)
  ).annotations({ message: () => `must be an integer from ${min} to ${max}` })

const NonEmptyText = Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" }))

/** A JSON value: what a JSON document can hold (no infinities or NaN, which YAML could produce). */
export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | { readonly [key: string]: JsonValue }
export const JsonValue: Schema.Schema<JsonValue> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Number.pipe(Schema.finite({ message: () => "must be a finite number" })),
  Schema.String,
  Schema.Array(Schema.suspend(() => JsonValue)),
  Schema.Record({ key: Schema.String, value: Schema.suspend(() => JsonValue) })
).annotations({ identifier: "JsonValue" })
export const JsonObject = Schema.Record({ key: Schema.String, value: JsonValue })

/** Names of tools, MCP servers, subagents and interaction handlers. */
export const KEY_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/
export const Key = Schema.String.pipe(
  Schema.pattern(KEY_PATTERN, { message: () => "must be 1 to 64 characters of a-z, A-Z, 0-9, _ or -" })
)

/** Environment variable names. */
export const EnvName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, {
    message: () => "must be an environment variable name: a letter or _, then letters, digits or _ (at most 128)"
  })
)

export const HttpUrl = Schema.String.pipe(
  Schema.filter((text) => {
    if (!URL.canParse(text)) return "must be an absolute http(s) URL"
    const url = new URL(text)
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https"
    if (url.username !== "" || url.password !== "") return "must not carry credentials; reference a secret"
    return true
  })
)

/** Whether a tool runs without asking (`allow`) or waits for an approval first (`ask`). */
export const ToolPermission = Schema.Literal("allow", "ask").annotations({ message: () => 'must be "allow" or "ask"' })
export type ToolPermission = typeof ToolPermission.Type

export const Instruction = Schema.String.pipe(
  Schema.filter((text) => /\S/u.test(text) || "must contain a non-whitespace character")
)

export const ModelReference = Schema.Struct({
  provider_config: ResourceName,
  name: ResourceName,
  context_window_tokens: Schema.optional(between(1, MAX_INT)),
  max_output_tokens: Schema.optional(between(1, MAX_INT)),
  cache_retention: Schema.optional(
    CacheRetention.annotations({ message: () => 'must be "none", "short" or "long"' })
  ),
  reasoning: Schema.optional(Schema.Struct({ effort: NonEmptyText }).annotations(strict))
}).annotations(strict)
export type ModelReference = typeof ModelReference.Type

/** A custom tool (`type: custom`) or the override of a built-in one (`type` omitted or `built_in`). */
export const ToolEntry = Schema.Struct({
  type: Schema.optional(
    Schema.Literal("built_in", "custom").annotations({ message: () => 'must be "built_in" or "custom"' })
  ),
  enabled: Schema.optional(Schema.Boolean),
  permission: Schema.optional(ToolPermission),
  description: Schema.optional(NonEmptyText),
  input_schema: Schema.optional(JsonObject)
}).annotations(strict)
export type ToolEntry = typeof ToolEntry.Type

export const MachineSource = Schema.Struct({
  machine_id: Schema.optional(NonEmptyText),
  machine_pool_id: Schema.optional(MachinePoolId),
  max_machines: Schema.optional(between(1, MAX_INT)),
  initial_num_machines: Schema.optional(between(0, MAX_INT)),
  delete_after_idle_minutes: Schema.optional(between(5, MAX_INT)),
  cwd: Schema.optional(NonEmptyText),
  machine_cpu: Schema.optional(between(1, MAX_INT)),
  machine_memory_mb: Schema.optional(between(1, MAX_INT)),
  env_overlay: Schema.optional(Schema.Record({ key: EnvName, value: Schema.NullOr(Schema.String) })),
  secret_env_overlay: Schema.optional(Schema.Record({ key: EnvName, value: Schema.NullOr(ResourceName) })),
  machine_provider_options_overlay: Schema.optional(JsonObject),
  description: Schema.optional(Schema.String)
}).annotations(strict)
export type MachineSource = typeof MachineSource.Type

export const McpServer = Schema.Struct({
  url: HttpUrl,
  default_enabled: Schema.optional(Schema.Boolean),
  permission: Schema.optional(ToolPermission),
  auth: Schema.optional(
    Schema.Struct({ type: Schema.Literal("bearer"), secret: ResourceName }).annotations(strict)
  )
}).annotations(strict)
export type McpServer = typeof McpServer.Type

/** A skill by name (owned by the project, personal to the caller, or granted) or by id. */
export const SkillReference = Schema.Struct({
  name: Schema.optional(ResourceName),
  id: Schema.optional(SkillId),
  version: Schema.optional(between(1, MAX_INT))
}).annotations(strict)
export type SkillReference = typeof SkillReference.Type

export const MemoryStore = Schema.Struct({
  name: ResourceName,
  access: Schema.optional(
    Schema.Literal("read_only", "read_write").annotations({ message: () => 'must be "read_only" or "read_write"' })
  )
}).annotations(strict)
export type MemoryStore = typeof MemoryStore.Type

/** A subagent: another config of the project (`agent_config_id`) or inline (`instruction`, ...). */
export const Subagent = Schema.Struct({
  description: NonEmptyText,
  agent_config_id: Schema.optional(AgentConfigId),
  instruction: Schema.optional(Instruction),
  model: Schema.optional(ModelReference),
  tools: Schema.optional(Schema.Record({ key: Key, value: ToolEntry })),
  mcp: Schema.optional(Schema.Record({ key: Key, value: McpServer })),
  skills: Schema.optional(Schema.Array(SkillReference)),
  machine_sources: Schema.optional(Schema.Array(MachineSource))
}).annotations(strict)
export type Subagent = typeof Subagent.Type

export const EventWebhook = Schema.Struct({
  url: HttpUrl,
  signing_secret: Schema.optional(ResourceName)
}).annotations(strict)

export const GitCredentials = Schema.Struct({
  token_secret: ResourceName,
  username: Schema.optional(NonEmptyText)
}).annotations(strict)

export const InteractionKind = Schema.Literal("approval", "question").annotations({
  message: () => 'must be "approval" or "question"'
})
export const InteractionHandler = Schema.Struct({
  type: Schema.Literal("webhook"),
  url: HttpUrl,
  interactions: Schema.optional(
    Schema.Array(InteractionKind).pipe(Schema.minItems(1, { message: () => "must list at least one kind" }))
  )
}).annotations(strict)

export const AgentConfigDefinition = Schema.Struct({
  instruction: Instruction,
  model: ModelReference,
  version: Schema.optional(
    Schema.Literal(DEFINITION_VERSION).annotations({ message: () => `must be "${DEFINITION_VERSION}", the only version` })
  ),
  machine_sources: Schema.optional(Schema.Array(MachineSource)),
  tools: Schema.optional(Schema.Record({ key: Key, value: ToolEntry })),
  mcp: Schema.optional(Schema.Record({ key: Key, value: McpServer })),
  skills: Schema.optional(Schema.Array(SkillReference)),
  memory_stores: Schema.optional(Schema.Array(MemoryStore)),
  subagents: Schema.optional(Schema.Record({ key: Key, value: Subagent })),
  event_webhook: Schema.optional(EventWebhook),
  git_credentials: Schema.optional(GitCredentials),
  interaction_handlers: Schema.optional(Schema.Record({ key: Key, value: InteractionHandler })),
  max_depth: Schema.optional(between(MAX_DEPTH.min, MAX_DEPTH.max)),
  max_subagents: Schema.optional(between(MAX_SUBAGENTS.min, MAX_SUBAGENTS.max))
}).annotations({
  ...strict,
  identifier: "AgentConfigDefinition",
  description: "The agent config document (docs/agent-configs.md)"
})
export type AgentConfigDefinition = typeof AgentConfigDefinition.Type
