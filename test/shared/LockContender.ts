/**
 * A child program for test/shared/StaleLockTakeover.test.ts: `node LockContender.ts LOCK` prints
 * "ready", then tries to take the lock file LOCK (src/process/PidLockFile.ts) each time the line
 * "take" comes on its stdin. It answers each try on stdout with a line "warning MESSAGE" for each
 * warning it logs, then "held" or "in use by OWNER" (a pid, or "unknown"). The next line,
 * "release", ends the try, the lock removed when held, answered "released". It ends with its stdin.
 */
import { Effect, Logger } from "effect"
import { createInterface } from "node:readline"
import { holdPidLockFile } from "../../src/process/PidLockFile.ts"

const [lockFile] = process.argv.slice(2)
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
const nextLine = Effect.promise(() => lines.next())
const answer = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))

const WarningsAnswered = Logger.layer([Logger.make(({ message }) => {
  process.stdout.write(`warning ${(Array.isArray(message) ? message : [message]).join(" ")}\n`)
})])

const tryToHold = holdPidLockFile(lockFile, {
  inUse: (owner) => `in use by ${owner ?? "unknown"}`,
  unusable: (cause) => `unusable: ${cause}`
}).pipe(
  Effect.as("held"),
  Effect.catch(Effect.succeed),
  Effect.flatMap(answer),
  Effect.andThen(nextLine),
  Effect.scoped,
  Effect.andThen(answer("released"))
)

const program = Effect.gen(function*() {
  yield* answer("ready")
  while ((yield* nextLine).value === "take") yield* tryToHold
})

Effect.runPromise(Effect.provide(program, WarningsAnswered))
