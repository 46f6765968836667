/**
 * A machine's directory on disk for the executor tests: a temporary tree the daemon may touch,
 * a sibling tree it may not (with a secret in it), and symlinks between them. Requests run
 * through the executor exactly as the daemon runs them.
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Operation, Outcome } from "../../src/domain/machines/DaemonProtocol.ts"
import type { MachineToolName } from "../../src/domain/machines/MachineTools.ts"
import { operationServicesLayer } from "../../src/daemon/Daemon.ts"
import { execute } from "../../src/daemon/Executor.ts"

interface ToolOptions {
  readonly cwd?: string
  readonly env?: Record<string, string>
  readonly unsetEnv?: ReadonlyArray<string>
}

export interface Tree {
  /** The machine's directory (a real path). */
  readonly root: string
  /** A directory outside it, holding `secret.txt`. */
  readonly outside: string
  readonly path: (...names: Array<string>) => string
  readonly write: (name: string, content: string | Uint8Array) => string
  readonly read: (name: string) => string
  readonly link: (name: string, target: string) => void
  readonly run: (operation: Operation) => Promise<Outcome>
  /** Runs the operations at once in one runtime, as the daemon runs concurrent requests. */
  readonly runAll: (operations: ReadonlyArray<Operation>) => Promise<ReadonlyArray<Outcome>>
  readonly toolOperation: (tool: MachineToolName, input: Record<string, unknown>, options?: ToolOptions) => Operation
  readonly tool: (tool: MachineToolName, input: Record<string, unknown>, options?: ToolOptions) => Promise<Outcome>
  readonly remove: () => void
}

export const makeTree = (): Tree => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "daemon-executor-")))
  const root = join(base, "machine")
  const outside = join(base, "outside")
  mkdirSync(root)
  mkdirSync(outside)
  writeFileSync(join(outside, "secret.txt"), "the secret\n")
  const path = (...names: Array<string>) => join(root, ...names)
  const layer = operationServicesLayer([root])
  const run = (operation: Operation) => Effect.runPromise(execute(operation).pipe(Effect.provide(layer)))
  const toolOperation = (tool: MachineToolName, input: Record<string, unknown>, options: ToolOptions = {}): Operation => ({
    operation: "tool",
    tool_call_id: "tcl_test",
    tool,
    input,
    cwd: options.cwd ?? root,
    env: options.env ?? {},
    unset_env: options.unsetEnv ?? []
  })
  return {
    root,
    outside,
    path,
    write: (name, content) => {
      mkdirSync(join(path(name), ".."), { recursive: true })
      writeFileSync(path(name), content)
      return path(name)
    },
    read: (name) => readFileSync(path(name), "utf8"),
    link: (name, target) => symlinkSync(target, path(name)),
    run,
    runAll: (operations) =>
      Effect.runPromise(Effect.forEach(operations, execute, { concurrency: "unbounded" }).pipe(Effect.provide(layer))),
    toolOperation,
    tool: (tool, input, options) => run(toolOperation(tool, input, options)),
    remove: () => rmSync(base, { recursive: true, force: true })
  }
}

export const sha256 = (content: string | Uint8Array) => `sha256:${createHash("sha256").update(content).digest("hex")}`

/** The output of a succeeded outcome (the test fails otherwise). */
export const outputOf = <A = any>(outcome: Outcome): A => {
  if (outcome.outcome !== "succeeded") throw new Error(`expected success, got ${JSON.stringify(outcome.error)}`)
  return outcome.output as A
}

/** The failure of a failed outcome (the test fails otherwise). */
export const failureOf = (outcome: Outcome) => {
  if (outcome.outcome !== "failed") throw new Error(`expected a failure, got ${JSON.stringify(outcome.output).slice(0, 500)}`)
  return outcome.error
}

/** The content of a file once a process has written it (a command that reports its pid, say). */
export const contentOnceWritten = async (path: string): Promise<string> => {
  for (;;) {
    const content = existsSync(path) ? readFileSync(path, "utf8") : ""
    if (content.endsWith("\n")) return content
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The processes of a group that are still running (zombies waiting to be reaped are not). */
export const livingProcessesOf = (group: number): Array<string> =>
  execFileSync("ps", ["-eo", "pid=,pgid=,stat=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, pgid, stat]) => Number(pgid) === group && stat !== undefined && !stat.startsWith("Z"))
    .map((fields) => fields.join(" "))
