/**
 * Runs the server's requests: each request id is admitted through the ledger, executed once, its
 * outcome recorded and then sent. Requests run concurrently and outlive the connection they came
 * on (a command keeps running while the daemon reconnects). A repeated id is answered from the
 * ledger: nothing while it runs, its stored outcome once done, `already_executed` once
 * acknowledged. A cancel ends the running operation (a command's process group is killed) and
 * answers `cancelled`; a cancel for an id never seen answers `cancelled` too, and the request,
 * should it come later, is not run.
 */
import { Context, Deferred, Effect, FiberMap, identity, Layer } from "effect"
import type { Outcome, Request, RequestId } from "../domain/machines/DaemonProtocol.ts"
import type { OperationFailure } from "../domain/machines/OperationFailure.ts"
import { execute } from "./Executor.ts"
import { Outbox } from "./Outbox.ts"
import { RequestLedger } from "./RequestLedger.ts"
import type { ToolServices } from "./tools/MachineToolRunners.ts"

const failed = (error: OperationFailure): Outcome => ({ outcome: "failed", error })

/** What `Effect.uninterruptibleMask` gives: runs an effect as interruptible as the caller was. */
type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const CANCELLED = failed({ code: "cancelled", message: "The request was cancelled." })
const ALREADY_EXECUTED = failed({
  code: "already_executed",
  message: "This request was executed before and its result acknowledged; it was not run again."
})

export class RequestRunner extends Context.Service<RequestRunner, {
  readonly run: (request: Request) => Effect.Effect<void>
  /** Answers a request this daemon cannot execute (it did not decode) with a failure. */
  readonly refuse: (id: RequestId, failure: OperationFailure) => Effect.Effect<void>
  readonly cancel: (id: RequestId) => Effect.Effect<void>
}>()("daemon/RequestRunner") {
  static readonly layer = Layer.effect(RequestRunner, Effect.gen(function*() {
    const ledger = yield* RequestLedger
    const outbox = yield* Outbox
    const context = yield* Effect.context<ToolServices>()
    const running = yield* FiberMap.make<RequestId>()
    const cancels = new Map<RequestId, Deferred.Deferred<void>>()

    const deliver = (id: RequestId, outcome: Outcome) =>
      outbox.send({ type: "result", request_id: id, ...outcome })

    /** Records the outcome, then sends it (interruptibly when `restore` says so: see `admit`). */
    const finish = (id: RequestId, outcome: Outcome, restore: Restore = identity) =>
      Effect.andThen(ledger.complete(id, outcome), restore(deliver(id, outcome)))

    /**
     * Admits the id: a new one goes to `onNew`, a known one is answered from the ledger. The
     * admission and what `onNew` records are one uninterruptible step: a connection that ends
     * interrupts the handling of its message, and an interruption after the id was recorded as
     * running and before `onNew` left it running with nothing to run or answer it, every re-send
     * ignored. Answers are sent interruptibly (`restore`), so the connection's end never waits on
     * one (a send on an ended connection returns at once anyway, Connection.ts); an answer not
     * sent is in the ledger, sent again after the next welcome.
     */
    const admit = (id: RequestId, onNew: (restore: Restore) => Effect.Effect<void>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(ledger.admit(id), (admission) => {
          switch (admission._tag) {
            case "new":
              return onNew(restore)
            case "running":
              return Effect.void
            case "done":
              return restore(deliver(id, admission.outcome))
            case "acknowledged":
              return restore(deliver(id, ALREADY_EXECUTED))
          }
        })
      )

    /**
     * Starts the operation in a fiber of its own (interruptible, unlike its admission); returns once
     * it is started. Its cancel is in `cancels` until its outcome is recorded: a cancel after that is
     * answered from the ledger, however long the outcome's send takes.
     */
    const start = (request: Request) =>
      Effect.gen(function*() {
        const id = request.request_id
        const cancelled = yield* Deferred.make<void>()
        cancels.set(id, cancelled)
        const forgetCancel = Effect.sync(() => cancels.delete(id))
        yield* FiberMap.run(
          running,
          id,
          execute(request).pipe(
            Effect.raceFirst(Effect.as(Deferred.await(cancelled), CANCELLED)),
            Effect.tap((outcome) => ledger.complete(id, outcome)),
            Effect.ensuring(forgetCancel),
            Effect.flatMap((outcome) => deliver(id, outcome)),
            Effect.provide(context)
          )
        )
      })

    return {
      run: (request) => admit(request.request_id, () => start(request)),
      refuse: (id, failure) => admit(id, (restore) => finish(id, failed(failure), restore)),
      cancel: (id) => {
        const cancelled = cancels.get(id)
        return cancelled === undefined
          ? admit(id, (restore) => finish(id, CANCELLED, restore))
          : Effect.asVoid(Deferred.succeed(cancelled, undefined))
      }
    }
  }))
}
