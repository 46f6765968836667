/**
 * Short statements on the hot paths, pipelined (docs/operations.md, "Postgres pool"): the reads
 * (the caller's key, a step's state, a model), the guarded appends, each one statement that
 * commits alone (an input, a turn's end, a tool call's result: Timeline.appendGuarded), and the
 * workflow engine's two statements that commit alone, its store of a message and of a reply
 * (src/layers/cluster/SocketRunnerCluster.ts). On Postgres, such a statement outside a
 * transaction goes to a second, small pool whose connections are shared: the statements
 * different fibers send in the same tick leave in one write and their answers come back in one,
 * where the main pool spends a write and a wake-up on each (docs/performance-record.md, "Reads
 * pipelined", "Guarded appends pipelined", "The engine's message and reply pipelined"). Inside a
 * transaction a statement runs on the transaction's connection, as any statement does, so it
 * sees what the transaction wrote.
 *
 * Statements pipelined on a connection run one after another, so only short ones go there: a slow
 * one would hold up those behind it. A guarded append never waits for a row lock there (it locks
 * its agent with NOWAIT, and one that finds the agent locked appends nothing, as when its guard
 * does not hold: AgentEventsRepository); the engine's statements wait at most for one of the
 * engine's own short statements (its read that claims new messages). A commit waits only for its
 * own WAL flush. The other writes, the transactions and the long reads stay on the main pool. A
 * pipelined statement is not cancelled when its fiber is interrupted (the cancel could stop
 * another fiber's): it runs to its end and its answer is dropped.
 *
 * On the embedded database (one session) they run on the main client.
 */
import type { SqlClient } from "effect/sql"
import { Context, Effect, Option } from "effect"

export class PipelinedStatements extends Context.Service<PipelinedStatements, {
  /** Runs `statement` with the client it should use: the pipelined one, or the current transaction's. */
  readonly run: <A, E, R>(statement: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("PipelinedStatements") {
  /** Statements on `pipelined`, except inside a transaction of `main`, where they run on its connection. */
  static readonly make = (main: SqlClient.SqlClient, pipelined: SqlClient.SqlClient) =>
    PipelinedStatements.of({
      run: (statement) =>
        Effect.flatMap(Effect.serviceOption(main.transactionService), (transaction) =>
          statement(Option.isSome(transaction) ? main : pipelined))
    })

  /** Statements on `main` (the embedded database's one session). */
  static readonly direct = (main: SqlClient.SqlClient) => PipelinedStatements.of({ run: (statement) => statement(main) })
}
