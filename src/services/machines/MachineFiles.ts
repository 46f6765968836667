/**
 * Files on a machine (`GET|PUT /orgs/{orgID}/machines/{machineID}/files?path=`), read and written
 * by its daemon (`file.read`, `file.write`) inside the directories it registered. Reading needs
 * to see the machine; writing to manage it (org admins for organization machines, the owner for a
 * personal one). No daemon connected: `daemon_runtime_unregistered`; a pool machine deleted (or
 * being deleted) is not found, as a machine deleted through the API is: its files are gone. The
 * daemon's failure codes are the API's own and are answered as they come.
 */
import { Context, Effect, Layer, type Schema } from "effect"
import type { Operation } from "../../domain/machines/DaemonProtocol.ts"
import { FileContent, WrittenFile } from "../../domain/machines/MachineFiles.ts"
import type { WriteFileBody } from "../../domain/machines/Machines.ts"
import type { OperationFailure } from "../../domain/machines/OperationFailure.ts"
import {
  DaemonRuntimeUnregistered,
  ExpectedDigestRequired,
  FileContentConflict,
  FileReadOnly,
  Forbidden,
  InvalidRequest,
  NotAFile,
  NotFound,
  RequestTooLarge,
  ServiceUnavailable,
  Unprocessable
} from "../../domain/shared/Errors.ts"
import type { MachineId, OrgId } from "../../domain/shared/Ids.ts"
import { MachineOperations } from "./MachineOperations.ts"
import { Machines } from "./Machines.ts"
import { isPoolMachineGone, type StoredMachine } from "./StoredMachine.ts"

/** How long the files route waits for the daemon's answer. */
const FILE_ANSWER_TIMEOUT_SECONDS = 60

const failureOf = (error: OperationFailure) => {
  const digest = error.current_digest === undefined ? {} : { current_digest: error.current_digest }
  switch (error.code) {
    case "invalid_request":
      return new InvalidRequest({ error: error.message, issues: [{ path: "/path", message: error.message }] })
    case "forbidden":
      return new Forbidden({ error: error.message })
    case "not_found":
      return new NotFound({ error: error.message })
    case "not_a_file":
      return new NotAFile({ error: error.message })
    case "file_read_only":
      return new FileReadOnly({ error: error.message })
    case "expected_digest_required":
      return new ExpectedDigestRequired({ error: error.message, ...digest })
    case "file_content_conflict":
      return new FileContentConflict({ error: error.message, ...digest })
    case "request_too_large":
      return new RequestTooLarge({ error: error.message })
    case "unprocessable":
    case "unsupported_operation":
      return new Unprocessable({ error: error.message })
    default:
      return new ServiceUnavailable({ error: `The machine's daemon could not do it (${error.code}): ${error.message}` })
  }
}

const make = Effect.gen(function*() {
  const machines = yield* Machines
  const operations = yield* MachineOperations

  const run = <A, I>(machine: StoredMachine, operation: Operation, output: Schema.Codec<A, I>) =>
    Effect.gen(function*() {
      // Its daemon will not come back to answer: not found, as a machine deleted through the API.
      if (isPoolMachineGone(machine)) {
        return yield* new NotFound({ error: `Machine ${machine.id} was deleted; its files went with it` })
      }
      return yield* operations.run(machine, operation, output, { requestPrefix: "file", timeoutSeconds: FILE_ANSWER_TIMEOUT_SECONDS }).pipe(
        Effect.mapError((error) =>
          error.kind === "offline"
            ? new DaemonRuntimeUnregistered({ error: error.message })
            : error.failure !== undefined
            ? failureOf(error.failure)
            : new ServiceUnavailable({ error: error.message })
        )
      )
    })

  const read = (orgId: OrgId, machineId: MachineId, path: string) =>
    Effect.flatMap(machines.visible(orgId, machineId), (machine) =>
      run(machine, { operation: "file.read", path }, FileContent))

  const write = (orgId: OrgId, machineId: MachineId, path: string, body: WriteFileBody) =>
    Effect.flatMap(machines.manageable(orgId, machineId), (machine) =>
      run(
        machine,
        {
          operation: "file.write",
          path,
          content: body.content,
          encoding: body.encoding ?? "utf-8",
          ...(body.expected_digest === undefined ? {} : { expected_digest: body.expected_digest })
        },
        WrittenFile
      ))

  return { read, write } as const
})

export class MachineFiles extends Context.Service<MachineFiles, Effect.Success<typeof make>>()("MachineFiles") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      Machines.layer,
      MachineOperations.layer
    ])
  )
}

