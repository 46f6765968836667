/**
 * The process groups of the commands running (RunCommand.ts), watched for the daemon's life by one
 * process: a shell that reads the list's changes on its stdin, a pipe only the daemon writes to,
 * and kills every group still listed when that pipe ends. The kernel closes the daemon's end when
 * the daemon dies, `kill -9` included: a command the daemon no longer supervises would run on with
 * no timeout and its result never read, while the restarted daemon reports it interrupted and the
 * model may run it again.
 *
 * One watcher for all of a daemon's commands (each command had one of its own): spawning a process
 * holds Node's main thread until the child has started, a few milliseconds a command. The watcher
 * is in a process group of its own, so that ending a command's group, or a terminal's Ctrl-C, does
 * not end it. One that exits while the daemon runs (a command killed it) is replaced when the next
 * command starts, and told every group still running.
 */
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { Context, Effect, Exit, Layer, type PlatformError, Queue, Scope, Semaphore, Stream } from "effect"

/** `+<group>` lists a group, `-<group>` takes it off; at the end of its input it kills the rest. */
const WATCHER_SCRIPT = `groups=' '
while read -r change; do
  group=\${change#?}
  case $change in
    +*) groups="$groups$group " ;;
    -*) case $groups in *" $group "*) groups="\${groups%% $group *} \${groups#* $group }" ;; esac ;;
  esac
done
for group in $groups; do kill -KILL -"$group" 2>/dev/null; done`

/** The watcher's name in `ps`: its `$0`. */
export const WATCHER_NAME = "agent-platform-command-watcher"

interface Watcher {
  readonly changes: Queue.Queue<string>
  readonly process: ChildProcessSpawner.ChildProcessHandle
  readonly scope: Scope.Closeable
}

const encoder = new TextEncoder()

export class CommandGroups extends Context.Service<CommandGroups, {
  /** Lists `group` with the watcher (started, or replaced, first when none is running). */
  readonly watch: (group: number) => Effect.Effect<void, PlatformError.PlatformError>
  /** Takes `group` off the list, once it has ended (its id may be reused after). */
  readonly unwatch: (group: number) => Effect.Effect<void>
}>()("daemon/CommandGroups") {
  static readonly layer = Layer.effect(CommandGroups, Effect.gen(function*() {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const daemonScope = yield* Effect.scope
    const listed = new Set<number>()
    const starting = yield* Semaphore.make(1)
    let current: Watcher | undefined

    /** A new watcher, told every group listed. */
    const start = Effect.gen(function*() {
      const scope = yield* Scope.fork(daemonScope)
      const changes = yield* Queue.unbounded<string>()
      for (const group of listed) Queue.offerUnsafe(changes, `+${group}\n`)
      const process = yield* ChildProcess.make("/bin/sh", ["-c", WATCHER_SCRIPT, WATCHER_NAME], {
        stdin: Stream.fromQueue(changes).pipe(Stream.map((change) => encoder.encode(change))),
        stdout: "ignore",
        stderr: "ignore"
      }).pipe(
        Scope.provide(scope),
        Effect.provideService(ChildProcessSpawner.ChildProcessSpawner, spawner),
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
      return { changes, process, scope } satisfies Watcher
    })

    /** The watcher running, started when there is none or the last has exited. */
    const running = starting.withPermits(1)(Effect.gen(function*() {
      if (current !== undefined && (yield* Effect.orElseSucceed(current.process.isRunning, () => false))) return current
      if (current !== undefined) yield* Scope.close(current.scope, Exit.void)
      current = yield* start
      return current
    }))

    return {
      watch: (group) =>
        Effect.map(running, (watcher) => {
          listed.add(group)
          Queue.offerUnsafe(watcher.changes, `+${group}\n`)
        }),
      unwatch: (group) =>
        Effect.sync(() => {
          listed.delete(group)
          if (current !== undefined) Queue.offerUnsafe(current.changes, `-${group}\n`)
        })
    }
  }))
}
