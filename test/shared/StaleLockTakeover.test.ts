/**
 * A stale lock file (src/process/PidLockFile.ts: the embedded database's DATA_DIR/pg.lock, the
 * daemon's state file lock) found by several processes at the same moment: CONTENDERS child
 * processes (LockContender.ts) are told together to take the same lock, left by a process that has
 * exited, ROUNDS times, every other round with the takeover marker of a process that died taking it
 * over left beside it. In each round exactly one holds it and the lock names that one; only it may
 * have warned that it replaced the stale lock; every other is told the lock is in use by a live
 * contender (the holder, or the one taking it over), never by the process gone; and no takeover
 * marker is left behind.
 */
import { describe, expect, it } from "vitest"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { isAlive } from "../../src/process/ProcessLiveness.ts"

const CONTENDERS = 3
const ROUNDS = 100
const ROOT = join(import.meta.dirname, "..", "..")

/** A contender's answer to "take": the warnings it logged, then "held" or "in use by OWNER". */
interface Answer {
  readonly pid: number
  readonly outcome: string
  readonly warnings: ReadonlyArray<string>
}

const startContender = (lockFile: string) => {
  const child = spawn(process.execPath, [join(import.meta.dirname, "LockContender.ts"), lockFile], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"]
  })
  let errors = ""
  child.stderr.on("data", (chunk) => (errors += chunk))
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const nextLine = async () => {
    const line = await lines.next()
    if (line.done) throw new Error(`contender ${child.pid} ended: ${errors}`)
    return line.value
  }
  return {
    pid: child.pid!,
    nextLine,
    send: (line: string) => child.stdin.write(`${line}\n`),
    answer: async (): Promise<Answer> => {
      const warnings: Array<string> = []
      let line = await nextLine()
      for (; line.startsWith("warning "); line = await nextLine()) warnings.push(line.slice("warning ".length))
      return { pid: child.pid!, outcome: line, warnings }
    },
    stop: () => child.kill()
  }
}

/** The pid of a process that has exited (and been reaped). */
const deadPid = () => {
  const { pid } = spawnSync("true")
  expect(isAlive(pid!)).toBe(false)
  return pid!
}

describe("a stale lock found by several processes at once", () => {
  it("is taken over by exactly one of them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-platform-stale-lock-"))
    const lockFile = join(dir, "lock")
    const contenders = Array.from({ length: CONTENDERS }, () => startContender(lockFile))
    try {
      for (const contender of contenders) expect(await contender.nextLine()).toBe("ready")
      const pids = contenders.map(({ pid }) => pid)
      const dead = deadPid()
      for (let round = 0; round < ROUNDS; round++) {
        writeFileSync(lockFile, `${dead}\n`)
        // Every other round, the marker of a takeover whose process died too.
        if (round % 2 === 1) writeFileSync(`${lockFile}.takeover`, `${dead}\n`)
        for (const contender of contenders) contender.send("take")
        const answers = await Promise.all(contenders.map((contender) => contender.answer()))

        const holders = answers.filter(({ outcome }) => outcome === "held").map(({ pid }) => pid)
        expect(holders, `round ${round}: ${JSON.stringify(answers)}`).toHaveLength(1)
        expect(Number(readFileSync(lockFile, "utf8"))).toBe(holders[0])
        for (const { outcome, pid, warnings } of answers) {
          if (pid === holders[0]) {
            expect(warnings.every((warning) => warning === `Replaced the stale lock ${lockFile} of process ${dead}`)).toBe(true)
          } else {
            expect(warnings).toEqual([])
            expect(outcome).toMatch(/^in use by (\d+|unknown)$/)
            if (outcome !== "in use by unknown") expect(pids).toContain(Number(outcome.slice("in use by ".length)))
          }
        }
        expect(readdirSync(dir)).toEqual(["lock"])

        for (const contender of contenders) contender.send("release")
        for (const contender of contenders) expect(await contender.nextLine()).toBe("released")
        expect(readdirSync(dir)).toEqual([])
      }
    } finally {
      for (const contender of contenders) contender.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
