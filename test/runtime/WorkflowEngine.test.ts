/**
 * The durable workflow engine over the application's database: a workflow runs an Activity,
 * suspends on a DurableDeferred, is resolved from outside through the deferred's token, and
 * completes; and the same after the engine and the database layer are torn down and rebuilt on
 * the same data (a restarted process), without the completed Activity running again. On Postgres,
 * the engine's messages and replies are written on the pipelined connections.
 */
import { SqlClient } from "effect/sql"
import { Activity, DurableDeferred, Workflow } from "effect/workflow"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Queue, Ref, Schedule, Schema, Scope } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseLive, PIPELINED_APPLICATION_NAME } from "../../src/layers/Database.ts"
import { WorkflowEngineLive } from "../../src/layers/WorkflowEngine.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { testConfig } from "../support/TestApp.ts"

/** What the workflow reports to the test: how often its Activity ran, and the tokens it awaits. */
class Probe extends Context.Service<Probe, {
  readonly activityRuns: Ref.Ref<number>
  readonly tokens: Queue.Queue<DurableDeferred.Token>
}>()("test/WorkflowProbe") {}

const Approval = DurableDeferred.make("approval", { success: Schema.String })

const ApprovalWorkflow = Workflow.make("WorkflowEngineTest/Approval", {
  payload: { requestId: Schema.String },
  success: Schema.String,
  idempotencyKey: (payload) => payload.requestId
})

const ApprovalWorkflowLive = ApprovalWorkflow.toLayer((payload) =>
  Effect.gen(function*() {
    const probe = yield* Probe
    const prepared = yield* Activity.make({
      name: "prepare",
      success: Schema.String,
      execute: Effect.as(Ref.update(probe.activityRuns, (n) => n + 1), `prepared ${payload.requestId}`)
    })
    yield* Queue.offer(probe.tokens, yield* DurableDeferred.token(Approval))
    const decision = yield* DurableDeferred.await(Approval)
    return `${prepared}, ${decision}`
  })
)

const makeProbe = Effect.all({ activityRuns: Ref.make(0), tokens: Queue.unbounded<DurableDeferred.Token>() })

const engineOn = (dataDir: string, probe: Context.Service.Shape<typeof Probe>) =>
  ApprovalWorkflowLive.pipe(
    Layer.provideMerge(WorkflowEngineLive),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(testConfig({ dataDir })),
    Layer.provide(Layer.succeed(Probe, probe))
  )

const awaitSuspension = (executionId: string) =>
  ApprovalWorkflow.poll(executionId).pipe(
    Effect.filterOrFail((result) => Option.isSome(result) && result.value._tag === "Suspended", () => "running"),
    Effect.retry(Schedule.spaced("10 millis")),
    Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(new Error("the workflow did not suspend")) })
  )

const awaitCompletion = (executionId: string) =>
  ApprovalWorkflow.poll(executionId).pipe(
    Effect.flatMap((result) =>
      Option.isSome(result) && result.value._tag === "Complete" ? Effect.succeed(result.value.exit) : Effect.fail("pending")
    ),
    Effect.retry(Schedule.spaced("10 millis")),
    Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(new Error("the workflow did not complete")) })
  )

const newRequestId = () => `req-${randomBytes(8).toString("hex")}`

describe("WorkflowEngine", () => {
  it.live("a workflow suspended on a DurableDeferred completes once the deferred is resolved by token", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(engineOn("memory://", probe), scope)
      yield* Effect.gen(function*() {
        const requestId = newRequestId()
        const executionId = yield* ApprovalWorkflow.execute({ requestId }, { discard: true })
        const token = yield* Queue.take(probe.tokens)
        yield* awaitSuspension(executionId)

        const resolvedAt = Date.now()
        yield* DurableDeferred.succeed(Approval, { token, value: "approved" })
        const exit = yield* awaitCompletion(executionId)
        expect(exit).toEqual(Exit.succeed(`prepared ${requestId}, approved`))
        // docs/runtime.md: a resolved deferred wakes its workflow within a fraction of a second
        expect(Date.now() - resolvedAt).toBeLessThan(1000)
        expect(yield* Ref.get(probe.activityRuns)).toBe(1)
      }).pipe(Effect.provide(context), Effect.ensuring(Scope.close(scope, Exit.void)))
    }), { timeout: 60_000 })

  // docs/operations.md, "Pipelined statements": the engine's statements that commit alone.
  it.live.skipIf(usesEmbeddedDatabase)("on Postgres, the engine's messages and replies are written on the pipelined connections", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(engineOn("memory://", probe), scope)
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Each row the engine inserts from now on, with the session that inserted it.
        yield* sql`CREATE TABLE engine_writes (table_name text NOT NULL, session text NOT NULL)`
        yield* sql`
          CREATE FUNCTION record_engine_write() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO engine_writes VALUES (TG_TABLE_NAME, current_setting('application_name'));
            RETURN NULL;
          END $$`
        for (const table of ["cluster_messages", "cluster_replies"]) {
          yield* sql.unsafe(`CREATE TRIGGER ${table}_writes AFTER INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION record_engine_write()`)
        }
        yield* Effect.addFinalizer(() =>
          // The function's triggers go with it.
          Effect.ignore(sql`DROP FUNCTION record_engine_write() CASCADE; DROP TABLE engine_writes`.unprepared)
        )

        const requestId = newRequestId()
        const executionId = yield* ApprovalWorkflow.execute({ requestId }, { discard: true })
        const token = yield* Queue.take(probe.tokens)
        yield* awaitSuspension(executionId)
        yield* DurableDeferred.succeed(Approval, { token, value: "approved" })
        expect(yield* awaitCompletion(executionId)).toEqual(Exit.succeed(`prepared ${requestId}, approved`))

        const writes = yield* sql<{ readonly table_name: string; readonly session: string }>`
          SELECT table_name, session FROM engine_writes`
        // The run's message and the deferred's, the run's reply at least.
        expect(writes.filter((write) => write.table_name === "cluster_messages").length).toBeGreaterThanOrEqual(2)
        expect(writes.some((write) => write.table_name === "cluster_replies")).toBe(true)
        expect(new Set(writes.map((write) => write.session))).toEqual(new Set([PIPELINED_APPLICATION_NAME]))
      }).pipe(Effect.provide(context), Effect.scoped, Effect.ensuring(Scope.close(scope, Exit.void)))
    }), { timeout: 60_000 })

  it.live("a workflow resumes after the engine and the database are rebuilt, without re-running its Activity", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "workflow-engine-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
      const probe = yield* makeProbe
      const requestId = newRequestId()

      const first = yield* Scope.make()
      const firstContext = yield* Layer.buildWithScope(engineOn(dataDir, probe), first)
      const { executionId, token } = yield* Effect.gen(function*() {
        const executionId = yield* ApprovalWorkflow.execute({ requestId }, { discard: true })
        const token = yield* Queue.take(probe.tokens)
        yield* awaitSuspension(executionId)
        return { executionId, token }
      }).pipe(Effect.provide(firstContext))
      yield* Scope.close(first, Exit.void)
      expect(yield* Ref.get(probe.activityRuns)).toBe(1)

      const second = yield* Scope.make()
      const secondContext = yield* Layer.buildWithScope(engineOn(dataDir, probe), second)
      yield* Effect.gen(function*() {
        yield* DurableDeferred.succeed(Approval, { token, value: "approved after restart" })
        const exit = yield* awaitCompletion(executionId)
        expect(exit).toEqual(Exit.succeed(`prepared ${requestId}, approved after restart`))
        expect(yield* Ref.get(probe.activityRuns)).toBe(1)
      }).pipe(Effect.provide(secondContext), Effect.ensuring(Scope.close(second, Exit.void)))
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
