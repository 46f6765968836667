/**
 * Executes one operation of a request and says how it went: the operation's output, or the
 * failure (OperationFailure) that stopped it. Never fails: a defect is an `internal_error`
 * result, logged.
 */
import { Effect, Schema } from "effect"
import * as fs from "node:fs/promises"
import type { Operation, Outcome, ToolOperation } from "../domain/machines/DaemonProtocol.ts"
import { MACHINE_TOOLS } from "../domain/machines/MachineTools.ts"
import { describeIssues } from "../process/SchemaIssues.ts"
import { absolutePath, Directories, resolveExisting } from "./Directories.ts"
import { readFileOperation, writeFileOperation } from "./FileOperations.ts"
import { checkpointCreate, checkpointRestore, worktreeCreate } from "./GitOperations.ts"
import { type OperationError, operationError } from "./OperationError.ts"
import { TOOL_RUNNERS, type ToolServices } from "./tools/MachineToolRunners.ts"
import type { ToolContext } from "./tools/ToolContext.ts"

/**
 * The call's working directory, resolved: the first of the machine's directories when it gives
 * none, and what it gives relative to that directory (a machine source's `cwd` that names a place
 * in every machine of a pool, wherever each has its directory).
 */
const toolContext = (operation: ToolOperation): Effect.Effect<ToolContext, OperationError, Directories> =>
  Effect.gen(function*() {
    const [first] = yield* Directories
    if (first === undefined) {
      return yield* Effect.fail(operationError("invalid_request", "the daemon has no directory to work in (start it with --dir)"))
    }
    const cwd = yield* Effect.flatMap(absolutePath(operation.cwd ?? ".", first), resolveExisting)
    const isDirectory = yield* Effect.promise(() => fs.stat(cwd).then((stat) => stat.isDirectory(), () => false))
    if (!isDirectory) return yield* Effect.fail(operationError("invalid_request", `the working directory ${cwd} is not a directory`))
    return { cwd, env: operation.env, unsetEnv: operation.unset_env }
  })

const runTool = (operation: ToolOperation) =>
  Effect.gen(function*() {
    const tool = MACHINE_TOOLS[operation.tool] as { input: Schema.Codec<unknown, unknown>; output: Schema.Codec<unknown, unknown> }
    const input = yield* Schema.decodeUnknownEffect(tool.input, { errors: "all" })(operation.input).pipe(
      Effect.mapError((error) => operationError("invalid_request", `the input of ${operation.tool} is invalid: ${describeIssues(error)}`))
    )
    const context = yield* toolContext(operation)
    const run = TOOL_RUNNERS[operation.tool] as (input: unknown, context: ToolContext) => Effect.Effect<unknown, OperationError, ToolServices>
    const output = yield* run(input, context)
    return yield* Schema.encodeEffect(tool.output)(output).pipe(Effect.orDie)
  })

const run = (operation: Operation) => {
  switch (operation.operation) {
    case "tool":
      return runTool(operation)
    case "file.read":
      return readFileOperation(operation)
    case "file.write":
      return writeFileOperation(operation)
    case "worktree.create":
      return worktreeCreate(operation)
    case "checkpoint.create":
      return checkpointCreate(operation)
    case "checkpoint.restore":
      return checkpointRestore(operation)
  }
}

export const execute = (operation: Operation): Effect.Effect<Outcome, never, ToolServices> =>
  run(operation).pipe(
    Effect.map((output): Outcome => ({ outcome: "succeeded", output })),
    Effect.catchTag("OperationError", ({ code, message, current_digest }) =>
      Effect.succeed<Outcome>({
        outcome: "failed",
        error: { code, message, ...(current_digest === undefined ? {} : { current_digest }) }
      })),
    Effect.catchDefect((defect) =>
      Effect.logError("an operation failed unexpectedly", defect).pipe(
        Effect.as<Outcome>({ outcome: "failed", error: { code: "internal_error", message: `the daemon failed: ${String(defect)}` } })
      )
    )
  )
