/**
 * The state file killed mid-write (src/daemon/StateFile.ts): a child process changes its ledger
 * as fast as it can (StateFileWriter.ts), its journal appended and folded into new snapshots again
 * and again, and is killed with SIGKILL at a random moment, ROUNDS times, each round going on from
 * what the last one left. After each kill the files load, and hold every change the child had
 * reported written (each entry as written, every forgotten id gone), and at most the one change
 * after it; the next round takes the stale lock over.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadState } from "../../src/daemon/StateFile.ts"
import { writtenEntry } from "./StateFileWriter.ts"

const ROUNDS = 8
/** The ids the writer's ledger keeps: the newest KEPT. */
const KEPT = 200
const SERVER = "http://127.0.0.1:1"
const ROOT = join(import.meta.dirname, "..", "..")

/**
 * Starts the writer on `path` and kills it with SIGKILL `afterMs` after its first printed change:
 * the last change it reported written (in the file `report`, written synchronously).
 */
const writeUntilKilled = (path: string, report: string, afterMs: number) =>
  new Promise<number>((resolve, reject) => {
    const writer = join(import.meta.dirname, "StateFileWriter.ts")
    const child = spawn(process.execPath, [writer, path, SERVER, String(KEPT), report], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    let errors = ""
    let killing: NodeJS.Timeout | undefined
    child.stdout.on("data", (chunk) => {
      output += chunk
      killing ??= setTimeout(() => child.kill("SIGKILL"), afterMs)
    })
    child.stderr.on("data", (chunk) => (errors += chunk))
    // "close", not "exit": the output read to its end.
    child.once("close", (_code, signal) => {
      clearTimeout(killing)
      const reported = readFileSync(report, "utf8").split("\n").slice(0, -1)
      if (signal !== "SIGKILL" || output === "" || reported.length === 0) {
        reject(new Error(`the writer ended by itself (${signal}): ${errors}`))
      } else resolve(Number(reported[reported.length - 1]))
    })
  })

describe("the state file killed mid-write", () => {
  it("keeps every change reported written, and nothing forgotten, across kills", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-platform-state-crash-"))
    const path = join(dir, "state.json")
    try {
      let changes = 0
      for (let round = 0; round < ROUNDS; round++) {
        const last = await writeUntilKilled(path, join(dir, "reported.txt"), 200 + Math.random() * 600)
        const { requests } = await Effect.runPromise(loadState(path, SERVER))
        const held = [...requests.keys()].map((id) => Number(id.slice("req-".length))).sort((a, b) => a - b)
        // The change in flight when the kill came may have been written, not reported.
        const newest = held[held.length - 1]
        expect([last, last + 1]).toContain(newest)
        const oldest = Math.max(0, newest - KEPT + 1)
        expect(held).toEqual(Array.from({ length: newest - oldest + 1 }, (_, index) => oldest + index))
        for (const n of held) expect(requests.get(`req-${n}`)).toEqual(writtenEntry(n))
        changes = newest
      }
      // Enough changes that the ledger turned over in every round on the whole: the journal held
      // forgotten ids, not only new ones, and was folded into new snapshots (every 256 KiB).
      expect(changes).toBeGreaterThan(ROUNDS * KEPT)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
