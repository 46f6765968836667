/**
 * Readiness (`GET /readyz`): the database answers within 2 s and every migration has been
 * applied (the migrator's table, `effect_sql_migrations`).
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { ServiceUnavailable } from "../../domain/shared/Errors.ts"
import { LATEST_MIGRATION_ID } from "../../layers/Migrations.ts"
import { replaceFailure } from "./Failures.ts"

const TIMEOUT = "2 seconds"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const appliedMigration = SqlSchema.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ applied: Schema.NullOr(Schema.Int) }),
    execute: () => sql`SELECT max(migration_id) AS applied FROM effect_sql_migrations`
  })

  const notReady = (error: string) => new ServiceUnavailable({ error })

  /** Succeeds when the server can serve requests; `service_unavailable` saying why not. */
  const check = appliedMigration(undefined).pipe(
    Effect.timeoutOrElse({ duration: TIMEOUT, orElse: () => Effect.fail(notReady("The database did not answer in time")) }),
    replaceFailure("SqlError", () => notReady("The database is not answering")),
    Effect.catchTag("SchemaError", Effect.die),
    Effect.catchTag("NoSuchElementError", Effect.die),
    Effect.flatMap(({ applied }) =>
      (applied ?? 0) >= LATEST_MIGRATION_ID
        ? Effect.void
        : Effect.fail(notReady("Database migrations have not finished"))
    )
  )

  return { check } as const
})

export class Readiness extends Context.Service<Readiness, Effect.Success<typeof make>>()("Readiness") {
  static readonly layer = Layer.effect(this, make)
}
