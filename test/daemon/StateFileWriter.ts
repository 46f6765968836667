/**
 * A child program for test/daemon/StateFileCrash.test.ts: `node StateFileWriter.ts
 * FILE SERVER KEPT REPORT` opens the state file at FILE and changes its ledger for ever, one change at a
 * time, each recording the next request id (`req-<n>`, n one more than the highest it holds) as
 * done with an output naming n (`writtenEntry`), and forgetting `req-<n - KEPT>`, so that the
 * ledger stays KEPT entries long while the journal is written and folded into new snapshots again
 * and again. Once a change is written (the point at which a daemon goes on) it appends n on its
 * own line to the file REPORT, synchronously (a line written to a pipe may still wait in this
 * process when it is killed, were the reader slow), and prints it.
 */
import { Effect } from "effect"
import { openSync, writeSync } from "node:fs"
import { pathToFileURL } from "node:url"
import { type LedgerEntry, StateFile } from "../../src/daemon/StateFile.ts"

/** The entry the writer records for `req-<n>`: outputs of 0 to 399 bytes of padding. */
export const writtenEntry = (n: number): LedgerEntry => ({
  state: "done",
  at: n,
  outcome: { outcome: "succeeded", output: { n, padding: "x".repeat(n % 400) } }
})

const [path, server, kept, report] = process.argv.slice(2)

const program = Effect.gen(function*() {
  const stateFile = yield* StateFile
  const held = [...(yield* stateFile.requests).keys()].map((id) => Number(id.slice("req-".length)))
  let next = held.length === 0 ? 0 : Math.max(...held) + 1
  const reported = openSync(report, "a")
  while (true) {
    const n = next++
    yield* stateFile.change(() => [undefined, [[`req-${n}`, writtenEntry(n)], [`req-${n - Number(kept)}`, null]]])
    writeSync(reported, `${n}\n`)
    process.stdout.write(`${n}\n`)
  }
})

// Run as a program only: the test imports `writtenEntry` from here.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  Effect.runPromise(Effect.provide(program, StateFile.layer(path, server)))
}
