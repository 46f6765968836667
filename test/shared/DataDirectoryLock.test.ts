/**
 * The embedded database's lock file (DATA_DIR/pg.lock, src/layers/Database.ts): a running process
 * named in it keeps the data directory; an exited one does not, even when it is a zombie (exited,
 * not yet reaped by its parent), as a server killed with its process group is until the system's
 * init reaps it.
 */
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { eventually } from "../support/Polling.ts"
import { testConfig } from "../support/TestApp.ts"

/** The process state in /proc (R, S, Z, ...). */
const stateOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
}

/**
 * A process that is running (`sleep 30`) and its child that has exited and stays a zombie: the
 * shell starts `sleep 2` and then becomes `sleep 30`, which never reaps it. The child outlives the
 * shell's `exec` by far: a child that exits first may be reaped by the shell itself.
 */
const zombieAndParent = Effect.acquireRelease(
  Effect.callback<{ readonly zombie: number; readonly parent: number; readonly kill: () => void }>((resume) => {
    const child = spawn("sh", ["-c", "sleep 2 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] })
    child.stdout.once("data", (chunk: Buffer) =>
      resume(Effect.succeed({ zombie: Number(String(chunk).trim()), parent: child.pid!, kill: () => child.kill("SIGKILL") })))
  }),
  ({ kill }) => Effect.sync(kill)
)

/** Opens the embedded database on `dataDir` and reads from it. */
const openOn = (dataDir: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 AS one`).pipe(
    Effect.provide(DatabaseLive.pipe(Layer.provide(testConfig({ dataDir, databaseUrl: Option.none() })))),
    Effect.scoped
  )

describe.skipIf(process.platform !== "linux")("the embedded database's lock file", () => {
  it.live("a running process keeps the data directory; a zombie's lock is taken over", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "lock-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
      const { parent, zombie } = yield* zombieAndParent
      yield* eventually(Effect.sync(() => stateOf(zombie)), (state) => state === "Z", "the child a zombie")

      writeFileSync(join(dataDir, "pg.lock"), String(parent))
      const refused = yield* Effect.flip(openOn(dataDir))
      expect(refused).toMatchObject({ _tag: "DataDirectoryInUse" })
      expect(refused.message).toContain(`in use by process ${parent}`)

      writeFileSync(join(dataDir, "pg.lock"), String(zombie))
      expect(yield* openOn(dataDir)).toEqual([{ one: 1 }])
    }).pipe(Effect.scoped), 60_000)
})
