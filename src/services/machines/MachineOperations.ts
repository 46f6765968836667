/**
 * One operation of the server's own on a machine (not a tool call): the files route
 * (MachineFiles.ts) and the workspace operations (WorkspaceMachines.ts). A machine without a
 * connected daemon is refused before anything is stored; otherwise the request is stored in the
 * machine's mailbox (`<prefix>-<random>`), the connection woken, and the daemon's result awaited
 * for at most `timeoutSeconds`; a request not answered by then is completed as failed (`cancelled`),
 * so it is not sent again, and the daemon's late result is acknowledged and ignored. Each caller
 * turns the failure into its own answer.
 */
import { Context, Data, Effect, Layer, Schema } from "effect"
import { randomBytes } from "node:crypto"
import type { Operation, Outcome } from "../../domain/machines/DaemonProtocol.ts"
import type { OperationFailure } from "../../domain/machines/OperationFailure.ts"
import { MachineHub } from "./MachineHub.ts"
import { MachineRequestsRepository } from "./MachineRequestsRepository.ts"
import { MachineResults } from "./MachineResults.ts"
import type { StoredMachine } from "./StoredMachine.ts"

/** Why an operation gave no output: no daemon, no answer in time, the daemon's failure, or an answer not understood. */
export class MachineOperationError extends Data.TaggedError("MachineOperationError")<{
  readonly kind: "offline" | "timeout" | "failed" | "unreadable"
  readonly message: string
  /** The daemon's failure (kind `failed`). */
  readonly failure?: OperationFailure
}> {}

const make = Effect.gen(function*() {
  const requests = yield* MachineRequestsRepository
  const results = yield* MachineResults
  const hub = yield* MachineHub

  const run = <A, I>(
    machine: StoredMachine,
    operation: Operation,
    output: Schema.Codec<A, I>,
    options: { readonly requestPrefix: string; readonly timeoutSeconds: number }
  ) =>
    Effect.gen(function*() {
      if (!machine.online) {
        return yield* new MachineOperationError({
          kind: "offline",
          message: `No daemon of machine ${machine.id} is connected; start it and try again`
        })
      }
      const requestId = `${options.requestPrefix}-${randomBytes(12).toString("hex")}`
      yield* requests.insert({
        request_id: requestId,
        machine_id: machine.id,
        machine_pool_id: machine.machine_pool_id,
        operation,
        secret_env: {},
        agent_id: null,
        tool_call_id: null
      })
      yield* hub.wake([machine.id])
      const outcome: Outcome = yield* results.await(requestId).pipe(
        Effect.timeoutOrElse({
          duration: `${options.timeoutSeconds} seconds`,
          orElse: () => {
            const message = `The daemon of machine ${machine.id} did not answer within ${options.timeoutSeconds} s`
            // Given up on: completed as cancelled, so the mailbox neither reads nor sends it again.
            return results.complete(requestId, { outcome: "failed", error: { code: "cancelled", message } }).pipe(
              Effect.andThen(Effect.fail(new MachineOperationError({ kind: "timeout", message })))
            )
          }
        })
      )
      if (outcome.outcome === "failed") {
        return yield* new MachineOperationError({
          kind: "failed",
          message: `The machine ${machine.id} could not do ${operation.operation} (${outcome.error.code}): ${outcome.error.message}`,
          failure: outcome.error
        })
      }
      return yield* Schema.decodeUnknownEffect(output)(outcome.output).pipe(
        Effect.mapError(() =>
          new MachineOperationError({
            kind: "unreadable",
            message: `The daemon of machine ${machine.id} answered something this server does not understand`
          })
        )
      )
    })

  return { run } as const
})

export class MachineOperations extends Context.Service<MachineOperations, Effect.Success<typeof make>>()("MachineOperations") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachineRequestsRepository.layer,
      MachineResults.layer,
      MachineHub.layer
    ])
  )
}
