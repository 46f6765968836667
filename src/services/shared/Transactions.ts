/**
 * Transactions, owned by services: a service runs the repository calls of one change in
 * `transaction(...)`. Called inside another transaction, it joins it.
 */
import { SqlClient } from "effect/sql"
import { Context, Effect, Layer } from "effect"
import { isSqlError } from "./Sql.ts"

const make = Effect.map(SqlClient.SqlClient, (sql) => ({
  /** Runs `effect` in one transaction; failing to begin or to commit is a defect. */
  transaction: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    sql.withTransaction(effect).pipe(Effect.catchIf(isSqlError, Effect.die))
}))

export class Transactions extends Context.Service<Transactions, Effect.Success<typeof make>>()("Transactions") {
  static readonly layer = Layer.effect(this, make)
}
