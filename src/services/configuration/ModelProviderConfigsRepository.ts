/** The `model_provider_configs` table. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { ApiFormat, ManagementKind, ModelProviderConfig } from "../../domain/configuration/ModelProviderConfigs.ts"
import { ModelProviderConfigId, OrgId, SecretId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { lockClause, RowLock, uniqueOrDie } from "../shared/Sql.ts"

const Settings = {
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  api_format: ApiFormat,
  base_url: Schema.String,
  auth_secret_id: Schema.NullOr(SecretId)
}
const NewProviderConfig = Schema.Struct({ id: ModelProviderConfigId, org_id: OrgId, ...Settings, management_kind: ManagementKind })
const ProviderConfigUpdate = Schema.Struct({ id: ModelProviderConfigId, ...Settings })

const make = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.findOne({
      Request: NewProviderConfig,
      Result: ModelProviderConfig,
      execute: (config) => sql`INSERT INTO model_provider_configs ${sql.insert(config)} RETURNING *`
    })

    const findInOrg = SqlSchema.findOneOption({
      Request: Schema.Struct({ orgId: OrgId, id: ModelProviderConfigId, lock: RowLock }),
      Result: ModelProviderConfig,
      execute: ({ id, lock, orgId }) => sql`
        SELECT * FROM model_provider_configs WHERE id = ${id} AND org_id = ${orgId} ${lockClause(sql, lock)}`
    })

    const findByIds = SqlSchema.findAll({
      Request: Schema.Array(ModelProviderConfigId),
      Result: ModelProviderConfig,
      execute: (ids) =>
        ids.length === 0 ? Effect.succeed([]) : sql`SELECT * FROM model_provider_configs WHERE ${sql.in("id", ids)}`
    })

    const findByName = SqlSchema.findOneOption({
      Request: Schema.Struct({ orgId: OrgId, name: Schema.String }),
      Result: ModelProviderConfig,
      execute: ({ name, orgId }) => sql`SELECT * FROM model_provider_configs WHERE org_id = ${orgId} AND name = ${name}`
    })

    const namesInOrgs = SqlSchema.findAll({
      Request: Schema.Struct({ orgIds: Schema.Array(OrgId), limit: Schema.Number }),
      Result: Schema.Struct({ name: Schema.String, total: Schema.Number }),
      // Ordered by code point, so that the same names are listed on either database.
      execute: ({ limit, orgIds }) => sql`
        SELECT name, (count(*) OVER ())::int AS total
        FROM (SELECT DISTINCT name FROM model_provider_configs WHERE org_id = ANY(${orgIds}::text[])) names
        ORDER BY name COLLATE "C" LIMIT ${limit}`
    })

    const page = keysetQuery(sql, {
      filter: Schema.Struct({ orgId: OrgId }),
      result: ModelProviderConfig,
      select: ({ orgId }) => sql`SELECT * FROM model_provider_configs WHERE org_id = ${orgId}`
    })

    const update = SqlSchema.findOne({
      Request: ProviderConfigUpdate,
      Result: ModelProviderConfig,
      execute: ({ id, ...settings }) => sql`
        UPDATE model_provider_configs SET ${sql.update(settings)}, updated_at = now() WHERE id = ${id} RETURNING *`
    })

    const usingSecrets = SqlSchema.findAll({
      Request: Schema.Array(SecretId),
      Result: ModelProviderConfig,
      execute: (secretIds) =>
        secretIds.length === 0
          ? Effect.succeed([])
          : sql`SELECT * FROM model_provider_configs WHERE ${sql.in("auth_secret_id", secretIds)} ORDER BY id`
    })

    const remove = SqlSchema.void({
      Request: ModelProviderConfigId,
      execute: (id) => sql`DELETE FROM model_provider_configs WHERE id = ${id}`
    })

    return {
      /** Fails with UniqueViolation when the organization has a config of that name. */
      insert: (config: typeof NewProviderConfig.Type) => uniqueOrDie(insert(config)),
      findInOrg: (orgId: OrgId, id: ModelProviderConfigId, lock: RowLock = "none") =>
        Effect.orDie(findInOrg({ orgId, id, lock })),
      findByIds: (ids: ReadonlyArray<ModelProviderConfigId>) => Effect.orDie(findByIds(ids)),
      findByName: (orgId: OrgId, name: string) => Effect.orDie(findByName({ orgId, name })),
      /** The first `limit` names (in order) of the configs of the organizations `orgIds`, and how many names they have. */
      namesInOrgs: (orgIds: ReadonlyArray<OrgId>, limit: number) =>
        Effect.map(Effect.orDie(namesInOrgs({ orgIds, limit })), (rows) => ({
          names: rows.map((row) => row.name),
          total: rows[0]?.total ?? 0
        })),
      page: (orgId: OrgId, keyset: Keyset) => page({ orgId }, keyset),
      /** Fails with UniqueViolation when the organization has a config of the new name. */
      update: (config: typeof ProviderConfigUpdate.Type) => uniqueOrDie(update(config)),
      remove: (id: ModelProviderConfigId) => Effect.orDie(remove(id)),
      /** The configs whose credential is one of these secrets, by id. */
      usingSecrets: (secretIds: ReadonlyArray<SecretId>) => Effect.orDie(usingSecrets(secretIds))
    } as const
  })

export class ModelProviderConfigsRepository extends Context.Service<ModelProviderConfigsRepository, Effect.Success<typeof make>>()("ModelProviderConfigsRepository") {
  static readonly layer = Layer.effect(this, make)
}
