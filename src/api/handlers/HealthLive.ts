import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../domain/shared/Errors.ts"
import { LATEST_MIGRATION_ID } from "../../layers/Migrations.ts"
import { Api } from "../Api.ts"

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const notReady = (error: string) => new ServiceUnavailable({ error })
    return handlers
      .handle("live", () => Effect.succeed({ status: "ok" }))
      .handle("ready", () =>
        sql<{ applied: number | null }>`SELECT max(migration_id) AS applied FROM effect_sql_migrations`.pipe(
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => notReady("The database did not answer in time") }),
          Effect.catchTag("SqlError", () => Effect.fail(notReady("The database is not answering"))),
          Effect.flatMap(([row]) =>
            Number(row?.applied ?? 0) >= LATEST_MIGRATION_ID
              ? Effect.succeed({ status: "ready" })
              : Effect.fail(notReady("Database migrations have not finished"))
          )
        ))
  }))
