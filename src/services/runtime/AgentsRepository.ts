/** The `agents` table. */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AgentConfigId, AgentId } from "../../domain/shared/Ids.ts"

export class AgentsRepository extends Effect.Service<AgentsRepository>()("AgentsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const runningConfigs = SqlSchema.findAll({
      Request: Schema.Array(AgentConfigId),
      Result: Schema.Struct({ id: AgentId, agent_config_id: AgentConfigId }),
      execute: (configIds) =>
        configIds.length === 0
          ? Effect.succeed([])
          : sql`SELECT id, agent_config_id FROM agents WHERE ${sql.in("agent_config_id", configIds)} ORDER BY id`
    })

    return {
      /** The agents that run one of these configs, oldest first. */
      runningConfigs: (configIds: ReadonlyArray<AgentConfigId>) => Effect.orDie(runningConfigs(configIds))
    } as const
  })
}) {}
