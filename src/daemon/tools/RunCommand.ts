/**
 * `run_command`: `/bin/sh -c <command>` in the call's working directory with its environment
 * overlay, in a process group of its own. Stdout and stderr are kept up to
 * COMMAND_OUTPUT_MAX_BYTES together. When the shell exits, times out, or the call is cancelled,
 * the whole group is ended: SIGTERM, then SIGKILL after COMMAND_KILL_GRACE unless the group is
 * already gone. Background processes a command starts end with it, and the group ends with the
 * daemon, however the daemon ends (CommandGroups.ts).
 */
import { ChildProcess } from "effect/process"
import { Clock, Duration, Effect, Fiber, Option, Ref, Schedule, Stream } from "effect"
import {
  COMMAND_DEFAULT_TIMEOUT_SECONDS,
  COMMAND_OUTPUT_MAX_BYTES,
  type RunCommandInput,
  type RunCommandOutput
} from "../../domain/machines/MachineTools.ts"
import { operationError } from "../OperationError.ts"
import { CommandGroups } from "./CommandGroups.ts"
import { commandEnvironment, type ToolContext } from "./ToolContext.ts"

export const COMMAND_KILL_GRACE = Duration.seconds(2)

/** Sends a signal to every process of a group; false when the group has no process left. */
const signalGroup = (group: number, signal: NodeJS.Signals | 0) =>
  Effect.sync(() => {
    try {
      process.kill(-group, signal)
      return true
    } catch {
      return false
    }
  })

/** Ends every process of a group: SIGTERM, a grace period while any is left, then SIGKILL. */
export const endProcessGroup = (group: number) =>
  Effect.gen(function*() {
    if (!(yield* signalGroup(group, "SIGTERM"))) return
    // Bounded by the schedule, not by a timeout: this runs uninterruptibly (see runCommand).
    yield* signalGroup(group, 0).pipe(
      Effect.repeat({ schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo({ duration: COMMAND_KILL_GRACE })), while: (alive) => alive })
    )
    yield* signalGroup(group, "SIGKILL")
  })

/** Stdout and stderr, kept until the two together reach the cap. */
class CappedOutput {
  private readonly chunks = { stdout: [] as Array<Uint8Array>, stderr: [] as Array<Uint8Array> }
  private kept = 0
  truncated = false

  add(stream: "stdout" | "stderr", chunk: Uint8Array) {
    const piece = chunk.subarray(0, Math.max(0, COMMAND_OUTPUT_MAX_BYTES - this.kept))
    if (piece.byteLength < chunk.byteLength) this.truncated = true
    if (piece.byteLength === 0) return
    this.chunks[stream].push(piece)
    this.kept += piece.byteLength
  }

  text(stream: "stdout" | "stderr") {
    return new TextDecoder().decode(Buffer.concat(this.chunks[stream]))
  }
}

export const runCommand = (input: RunCommandInput, context: ToolContext) =>
  Effect.scoped(Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    // Its own process group (detached), an empty stdin that is closed at once.
    const child = yield* ChildProcess.make("/bin/sh", ["-c", input.command], {
      cwd: context.cwd,
      env: commandEnvironment(context),
      extendEnv: false,
      detached: true,
      stdin: Stream.empty
    }).pipe(
      Effect.mapError((error) => operationError("internal_error", `the command could not start: ${error.message}`))
    )
    const groups = yield* CommandGroups
    yield* groups.watch(child.pid).pipe(
      Effect.onError(() => Effect.uninterruptible(endProcessGroup(child.pid))),
      Effect.mapError((error) => operationError("internal_error", `the command's watcher could not start: ${error.message}`))
    )
    // Once, whichever comes first: the command ended, or (a cancel) the scope closing, before the processes' own releases.
    const pending = yield* Ref.make(true)
    const endGroup = Effect.flatMap(
      Ref.getAndSet(pending, false),
      (first) => first ? Effect.uninterruptible(Effect.andThen(endProcessGroup(child.pid), groups.unwatch(child.pid))) : Effect.void
    )
    yield* Effect.addFinalizer(() => endGroup)
    const output = new CappedOutput()
    const collect = (stream: "stdout" | "stderr") =>
      Stream.runForEach(child[stream], (chunk) => Effect.sync(() => output.add(stream, chunk))).pipe(
        Effect.ignore,
        Effect.forkChild
      )
    const readers = [yield* collect("stdout"), yield* collect("stderr")]
    const exit = yield* child.exitCode.pipe(
      Effect.map((code): number | null => code),
      Effect.orElseSucceed(() => null),
      Effect.timeoutOption(Duration.seconds(input.timeout_seconds ?? COMMAND_DEFAULT_TIMEOUT_SECONDS))
    )
    yield* endGroup
    yield* Fiber.joinAll(readers)
    return {
      exit_code: Option.getOrNull(exit),
      stdout: output.text("stdout"),
      stderr: output.text("stderr"),
      output_truncated: output.truncated,
      timed_out: Option.isNone(exit),
      duration_ms: (yield* Clock.currentTimeMillis) - started
    } satisfies RunCommandOutput
  }))
