/**
 * Agent configs (spec 2.3, 4.1; docs/agent-configs.md): parse the source with positions,
 * validate it, resolve its names for the project, compile, and store it once per distinct
 * (project, source, effective definition). Configs are immutable; their `model` is rendered at
 * response time from the configured model's current revision.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { InvalidRequest, NotFound, ValidationFailed } from "../../domain/shared/Errors.ts"
import { AgentConfigId, type ConfiguredModelId, type OrgId, type ProjectId, type UserId } from "../../domain/shared/Ids.ts"
import type { ResolvedModel } from "../../domain/configuration/Models.ts"
import { type ListQuery, toPage } from "../../domain/shared/Pagination.ts"
import { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import { AgentConfig, type CreateAgentConfig, renderModel } from "../../domain/configuration/agent-config/AgentConfig.ts"
import { canonicalJson } from "../../domain/configuration/agent-config/Canonical.ts"
import { compile, type ModelOverrides } from "../../domain/configuration/agent-config/Compile.ts"
import type { CompiledAgentConfig } from "../../domain/configuration/agent-config/Compiled.ts"
import type { JsonValue } from "../../domain/configuration/agent-config/Definition.ts"
import { sha256 } from "../shared/Hash.ts"
import {
  modelKey,
  referencesOf,
  type References,
  type Resolutions,
  skillKey,
  type SkillResolution
} from "../../domain/configuration/agent-config/References.ts"
import { parseSource, type SourceFormat } from "../../domain/configuration/agent-config/Source.ts"
import { sortIssues, validateDefinition } from "../../domain/configuration/agent-config/Validate.ts"
import { Access } from "../tenancy/Access.ts"
import { Models } from "./Models.ts"
import { pageRequest } from "../shared/Paging.ts"
import { Secrets } from "./Secrets.ts"
import { Skills } from "./Skills.ts"
import { firstOr } from "../shared/Sql.ts"

interface AgentConfigRow {
  readonly id: AgentConfigId
  readonly org_id: OrgId
  readonly project_id: ProjectId
  readonly source: string
  readonly source_format: SourceFormat
  readonly effective_definition_hash: string
  readonly instruction_hash: string
  readonly configured_model_id: ConfiguredModelId
  readonly model_overrides: ModelOverrides
  readonly compiled_definition: CompiledAgentConfig
  readonly created_at: Date
}

/** The outcome of a create: the config, and whether this request made it (201) or found it (200). */
export interface CreatedAgentConfig {
  readonly config: AgentConfig
  readonly created: boolean
}

const invalid = (issues: ReadonlyArray<{ path: string; message: string; line?: number; column?: number }>) =>
  new ValidationFailed({
    error: `The agent config source has ${issues.length} problem${issues.length === 1 ? "" : "s"}: ` +
      issues.slice(0, 5).map((issue) =>
        `${issue.path || "document"} (line ${issue.line}, column ${issue.column}): ${issue.message}`
      ).join("; ") + (issues.length > 5 ? "; ..." : ""),
    issues: sortIssues(issues)
  })

export class AgentConfigs extends Effect.Service<AgentConfigs>()("AgentConfigs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const models = yield* Models
    const secrets = yield* Secrets
    const skills = yield* Skills

    const render = (row: AgentConfigRow) =>
      Effect.map(
        models.current(row.configured_model_id).pipe(Effect.orDie),
        (current) =>
          new AgentConfig({
            id: row.id,
            org_id: row.org_id,
            project_id: row.project_id,
            source: row.source,
            source_format: row.source_format,
            effective_definition_hash: row.effective_definition_hash,
            model: renderModel(current, row.model_overrides),
            instruction_hash: row.instruction_hash,
            created_at: row.created_at,
            compiled_definition: row.compiled_definition
          }, { disableValidation: true })
      )

    const resolve = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, references: References) =>
      Effect.gen(function*() {
        const modelEntries = yield* Effect.forEach(references.models, (ref) =>
          Effect.map(
            models.resolveForProject(orgId, projectId, ref.provider_config, ref.name),
            Option.map((model): [string, ResolvedModel] => [modelKey(ref), model])
          ))
        const secretEntries = yield* Effect.forEach(references.secretNames, (name) =>
          Effect.map(
            secrets.resolveForProject(orgId, projectId, userId, name),
            Option.map((secret) => [name, secret.id] as const)
          ))
        const skillEntries = yield* Effect.forEach(references.skills, (ref) =>
          Effect.gen(function*() {
            const candidates = ref.id !== undefined
              ? Option.toArray(yield* skills.usableById(orgId, projectId, userId, ref.id))
              : yield* skills.usableByName(orgId, projectId, userId, ref.name ?? "")
            if (candidates.length === 0) return Option.none()
            const best = candidates[0]
            const resolution: SkillResolution = best.use === "granted" && candidates.length > 1
              ? { _tag: "Ambiguous", ids: candidates.map((skill) => skill.id) }
              : { _tag: "Found", id: best.id, name: best.name, latestVersion: best.latestVersion }
            return Option.some([skillKey(ref), resolution] as const)
          }))
        const configRows = references.agentConfigIds.length === 0 ? [] : yield* sql<{
          id: string
          max_depth: number
          max_subagents: number
        }>`
          SELECT id, (compiled_definition->>'max_depth')::int AS max_depth,
            (compiled_definition->>'max_subagents')::int AS max_subagents
          FROM agent_configs
          WHERE project_id = ${projectId} AND ${sql.in("id", references.agentConfigIds)}`.pipe(Effect.orDie)
        const resolutions: Resolutions = {
          models: new Map(modelEntries.flatMap(Option.toArray)),
          secrets: new Map(secretEntries.flatMap(Option.toArray)),
          skills: new Map(skillEntries.flatMap(Option.toArray)),
          agentConfigs: new Map(
            configRows.map((row) => [row.id, { maxDepth: row.max_depth, maxSubagents: row.max_subagents }])
          )
        }
        return resolutions
      })

    const create = (orgId: OrgId, projectId: ProjectId, input: CreateAgentConfig) =>
      Effect.gen(function*() {
        yield* access.requireProjectAccess(orgId, projectId, "write")
        if (typeof input.source !== "string" && input.source_format !== "json") {
          return yield* Effect.fail(
            new InvalidRequest({
              error: "An object source needs source_format json; send YAML as text",
              issues: [{ path: "/source_format", message: "must be json when source is an object" }]
            })
          )
        }
        // The object form is checked, and positioned, as its canonical text: what is stored.
        const text = typeof input.source === "string" ? input.source : canonicalJson(input.source as JsonValue)
        const parsed = parseSource(text, input.source_format)
        if (parsed._tag === "SyntaxError") return yield* Effect.fail(invalid(parsed.issues))
        const validated = validateDefinition(parsed.source)
        if (validated._tag === "Invalid") return yield* Effect.fail(invalid(validated.issues))
        const definition = validated.definition

        const principal = yield* CurrentPrincipal
        const userId = principal.kind === "user" ? principal.userId : null
        const resolutions = yield* resolve(orgId, projectId, userId, referencesOf(definition))
        const result = compile(definition, resolutions, parsed.source.issueAt)
        if (result._tag === "Invalid") return yield* Effect.fail(invalid(result.issues))
        const { compiled, model, modelOverrides, resolved } = result.compilation

        const source = input.source_format === "yaml" ? text : canonicalJson(parsed.source.value as JsonValue)
        const sourceHash = sha256(`${input.source_format}\n${source}`)
        const effectiveHash = sha256(canonicalJson({ definition: parsed.source.value as JsonValue, resolved }))
        const modelIds = Array.from(
          new Set(
            [model.model.id, ...Object.values(compiled.subagents ?? {}).flatMap((sub) =>
              sub.definition === undefined ? [] : [sub.definition.model.configured_model_id]
            )]
          )
        )
        const id = AgentConfigId.make()
        const inserted = yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<AgentConfigRow>`
            INSERT INTO agent_configs ${
            sql.insert({
              id,
              org_id: orgId,
              project_id: projectId,
              source,
              source_format: input.source_format,
              source_hash: sourceHash,
              effective_definition_hash: effectiveHash,
              instruction_hash: sha256(definition.instruction),
              configured_model_id: model.model.id,
              model_overrides: JSON.stringify(modelOverrides),
              compiled_definition: JSON.stringify(compiled)
            })
          }
            ON CONFLICT (project_id, source_hash, effective_definition_hash) DO NOTHING
            RETURNING *`
          if (rows.length > 0) {
            yield* sql`
              INSERT INTO agent_config_models ${
              sql.insert(modelIds.map((modelId) => ({ agent_config_id: id, configured_model_id: modelId })))
            }`
          }
          return rows
        })).pipe(Effect.orDie)
        if (inserted.length > 0) return { config: yield* render(inserted[0]), created: true }
        const existing = yield* sql<AgentConfigRow>`
          SELECT * FROM agent_configs
          WHERE project_id = ${projectId} AND source_hash = ${sourceHash}
            AND effective_definition_hash = ${effectiveHash}`.pipe(
          Effect.orDie,
          Effect.flatMap(firstOr(() => new NotFound({ error: `Project ${projectId} not found` })))
        )
        return { config: yield* render(existing), created: false }
      })

    const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.projectAccess(orgId, projectId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<AgentConfigRow>`
          SELECT * FROM agent_configs
          WHERE project_id = ${projectId} ${after === undefined ? sql`` : sql`AND id < ${after}`}
          ORDER BY id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
        const configs = yield* Effect.forEach(rows, render)
        return toPage(configs, limit, (config) => config.id)
      })

    const get = (orgId: OrgId, projectId: ProjectId, configId: AgentConfigId) =>
      Effect.gen(function*() {
        yield* access.projectAccess(orgId, projectId)
        const rows = yield* sql<AgentConfigRow>`
          SELECT * FROM agent_configs WHERE id = ${configId} AND project_id = ${projectId}`.pipe(Effect.orDie)
        return yield* render(yield* firstOr(() => new NotFound({ error: `Agent config ${configId} not found` }))(rows))
      })

    return { create, list, get } as const
  })
}) {}
