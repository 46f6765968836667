/**
 * Short reads on the hot paths (the caller's key, a step's state, a model), pipelined
 * (docs/operations.md, "Postgres pool"). On Postgres, a read outside a transaction goes to a
 * second, small pool whose connections are shared: the reads different fibers send in the same
 * tick leave in one write and their answers come back in one, where the main pool spends a
 * write and a wake-up on each (docs/performance-record.md, "Reads pipelined"). Inside a transaction a
 * read runs on the transaction's connection, as any statement does, so it sees what the
 * transaction wrote.
 *
 * Only reads go there, and only short ones: statements pipelined on a connection run one after
 * another, so a slow one holds up those behind it, and a write's commit waits for the disk, so
 * writes pipelined on one connection would wait for it one after another instead of together.
 * A pipelined read is not cancelled when its fiber is interrupted (the cancel could stop another
 * fiber's read): it runs to its end and its answer is dropped.
 *
 * On the embedded database (one session) reads run on the main client.
 */
import type { SqlClient } from "effect/sql"
import { Context, Effect, Option } from "effect"

export class PipelinedReads extends Context.Service<PipelinedReads, {
  /** Runs `read` with the client it should use: the pipelined one, or the current transaction's. */
  readonly run: <A, E, R>(read: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("PipelinedReads") {
  /** Reads on `pipelined`, except inside a transaction of `main`, where they run on its connection. */
  static readonly make = (main: SqlClient.SqlClient, pipelined: SqlClient.SqlClient) =>
    PipelinedReads.of({
      run: (read) =>
        Effect.flatMap(Effect.serviceOption(main.transactionService), (transaction) =>
          read(Option.isSome(transaction) ? main : pipelined))
    })

  /** Reads on `main` (the embedded database's one session). */
  static readonly direct = (main: SqlClient.SqlClient) => PipelinedReads.of({ run: (read) => read(main) })
}
