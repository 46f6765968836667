/**
 * The `agent_configs` table and its `agent_config_models` (the configured models a config uses,
 * each held by a foreign key so that a model in use cannot be deleted). One row per distinct
 * (project, source, effective definition): inserting it again finds the first.
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Array as Arr, Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { AgentConfig } from "../../domain/configuration/agent-config/AgentConfig.ts"
import { CompiledAgentConfig } from "../../domain/configuration/agent-config/Compiled.ts"
import { ModelOverrides } from "../../domain/configuration/agent-config/ModelOverrides.ts"
import { AgentConfigId, ConfiguredModelId, OrgId, ProjectId, SkillId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"

/** A config as stored: an AgentConfig whose model is kept as the configured model and the overrides it renders from. */
export const StoredAgentConfig = Schema.Struct({
  ...Struct.omit(AgentConfig.fields, ["model"]),
  configured_model_id: ConfiguredModelId,
  model_overrides: ModelOverrides
})
export type StoredAgentConfig = typeof StoredAgentConfig.Type

const NewAgentConfig = Schema.Struct({
  ...StoredAgentConfig.fields,
  source: Schema.String,
  source_hash: Schema.String,
  instruction_hash: Schema.String
}).mapFields(Struct.omit(["created_at"]))

const ContentKey = Schema.Struct({ projectId: ProjectId, sourceHash: Schema.String, effectiveHash: Schema.String })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOneOption({
    Request: NewAgentConfig,
    Result: StoredAgentConfig,
    execute: (config) => sql`
      INSERT INTO agent_configs ${
      sql.insert({
        ...config,
        model_overrides: JSON.stringify(config.model_overrides),
        compiled_definition: JSON.stringify(config.compiled_definition)
      })
    }
      ON CONFLICT (project_id, source_hash, effective_definition_hash) DO NOTHING
      RETURNING *`
  })

  const insertModels = SqlSchema.void({
    Request: Schema.Struct({ configId: AgentConfigId, modelIds: Schema.Array(ConfiguredModelId) }),
    execute: ({ configId, modelIds }) => {
      const rows = modelIds.map((modelId) => ({ agent_config_id: configId, configured_model_id: modelId }))
      // A config always uses a model; `sql.insert` takes a non-empty list of rows.
      return Arr.isArrayNonEmpty(rows) ? sql`INSERT INTO agent_config_models ${sql.insert(rows)}` : Effect.void
    }
  })

  const findByContent = SqlSchema.findOneOption({
    Request: ContentKey,
    Result: StoredAgentConfig,
    execute: ({ effectiveHash, projectId, sourceHash }) => sql`
      SELECT * FROM agent_configs
      WHERE project_id = ${projectId} AND source_hash = ${sourceHash} AND effective_definition_hash = ${effectiveHash}`
  })

  const findInProject = SqlSchema.findOneOption({
    Request: Schema.Struct({ projectId: ProjectId, id: AgentConfigId }),
    Result: StoredAgentConfig,
    execute: ({ id, projectId }) => sql`SELECT * FROM agent_configs WHERE id = ${id} AND project_id = ${projectId}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ projectId: ProjectId }),
    result: StoredAgentConfig,
    order: "descending",
    select: ({ projectId }) => sql`SELECT * FROM agent_configs WHERE project_id = ${projectId}`
  })

  const limitsOf = SqlSchema.findAll({
    Request: Schema.Struct({ projectId: ProjectId, ids: Schema.Array(Schema.String) }),
    Result: Schema.Struct({ id: AgentConfigId, max_depth: Schema.Int, max_subagents: Schema.Int }),
    execute: ({ ids, projectId }) =>
      ids.length === 0 ? Effect.succeed([]) : sql`
        SELECT id, (compiled_definition->>'max_depth')::int AS max_depth,
          (compiled_definition->>'max_subagents')::int AS max_subagents
        FROM agent_configs WHERE project_id = ${projectId} AND ${sql.in("id", ids)}`
  })

  const compiledDefinition = SqlSchema.findOneOption({
    Request: AgentConfigId,
    Result: Schema.Struct({ compiled_definition: CompiledAgentConfig }),
    execute: (id) => sql`SELECT compiled_definition FROM agent_configs WHERE id = ${id}`
  })

  const referencingSkill = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, skillId: SkillId }),
    Result: Schema.Struct({ id: AgentConfigId }),
    execute: ({ orgId, skillId }) => sql`
      SELECT id FROM agent_configs
      WHERE org_id = ${orgId}
        AND jsonb_path_exists(compiled_definition, '$.**.skill_id ? (@ == $id)', jsonb_build_object('id', ${skillId}::text))`
  })

  return {
    /**
     * Stores a new config with the models it uses; none when the project has this content
     * already (then `findByContent` finds it). Run it in a transaction.
     */
    insert: (config: typeof NewAgentConfig.Type, modelIds: ReadonlyArray<ConfiguredModelId>) =>
      Effect.tap(Effect.orDie(insert(config)), (inserted) =>
        Option.isSome(inserted) ? Effect.orDie(insertModels({ configId: config.id, modelIds })) : Effect.void),
    findByContent: (projectId: ProjectId, sourceHash: string, effectiveHash: string) =>
      Effect.orDie(findByContent({ projectId, sourceHash, effectiveHash })),
    findInProject: (projectId: ProjectId, id: AgentConfigId) => Effect.orDie(findInProject({ projectId, id })),
    /** Newest first. */
    page: (projectId: ProjectId, keyset: Keyset) => page({ projectId }, keyset),
    /** The depth and subagent limits of the configs of the project among `ids`. */
    limitsOf: (projectId: ProjectId, ids: ReadonlyArray<string>) => Effect.orDie(limitsOf({ projectId, ids })),
    compiledDefinition: (id: AgentConfigId) =>
      Effect.map(Effect.orDie(compiledDefinition(id)), Option.map((row) => row.compiled_definition)),
    /** The configs of the organization that name the skill (at the top level or in inline subagents). */
    referencingSkill: (orgId: OrgId, skillId: SkillId) =>
      Effect.map(Effect.orDie(referencingSkill({ orgId, skillId })), (rows) => rows.map((row) => row.id))
  } as const
})

export class AgentConfigsRepository extends Context.Service<AgentConfigsRepository, Effect.Success<typeof make>>()("AgentConfigsRepository") {
  static readonly layer = Layer.effect(this, make)
}
