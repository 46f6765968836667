/**
 * run_command with real processes: exit codes, output and its cap, the working directory and
 * the environment overlay, and the process group ended on timeout, on cancel (the request's
 * fiber interrupted) and when the shell exits leaving background processes.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { COMMAND_OUTPUT_MAX_BYTES } from "../../src/domain/machines/MachineTools.ts"
import { operationServicesLayer } from "../../src/daemon/Daemon.ts"
import { execute } from "../../src/daemon/Executor.ts"
import { contentOnceWritten, failureOf, livingProcessesOf, makeTree, outputOf, type Tree } from "./Fixtures.ts"

let tree: Tree
beforeEach(() => {
  tree = makeTree()
})
afterEach(() => tree.remove())

const run = (
  command: string,
  options: { timeout_seconds?: number; cwd?: string; env?: Record<string, string>; unsetEnv?: ReadonlyArray<string> } = {}
) =>
  tree.tool("run_command", { command, ...(options.timeout_seconds ? { timeout_seconds: options.timeout_seconds } : {}) }, options)

/** The process group id a command printed first (`echo $$`: the shell leads its own group). */
const groupOf = (stdout: string) => Number(stdout.split("\n")[0])

describe("run_command", () => {
  it("gives the exit code, stdout and stderr, with stdin closed", async () => {
    expect(outputOf(await run("echo out; echo err >&2; exit 3"))).toMatchObject({
      exit_code: 3,
      stdout: "out\n",
      stderr: "err\n",
      output_truncated: false,
      timed_out: false
    })
    expect(outputOf(await run("cat; echo done"))).toMatchObject({ exit_code: 0, stdout: "done\n" })
  })

  it("runs in the request's working directory with the environment overlay on the daemon's", async () => {
    tree.write("sub/marker", "")
    const output = outputOf(await run("pwd; echo \"$GREETING $HOME\"", { cwd: tree.path("sub"), env: { GREETING: "hello" } }))
    expect(output.stdout).toBe(`${tree.path("sub")}\nhello ${process.env.HOME}\n`)
  })

  it("does not pass on the daemon's variables the request unsets (a config overlay's null)", async () => {
    process.env.AP_TEST_POOL_DEFAULT = "from the pool"
    try {
      const print = "echo \"${AP_TEST_POOL_DEFAULT-unset} ${HOME-unset}\""
      expect(outputOf(await run(print)).stdout).toBe(`from the pool ${process.env.HOME}\n`)
      expect(outputOf(await run(print, { unsetEnv: ["AP_TEST_POOL_DEFAULT"] })).stdout).toBe(`unset ${process.env.HOME}\n`)
      // Unset and set again by the overlay: the overlay's value.
      expect(outputOf(await run(print, { unsetEnv: ["AP_TEST_POOL_DEFAULT"], env: { AP_TEST_POOL_DEFAULT: "mine" } })).stdout)
        .toBe(`mine ${process.env.HOME}\n`)
    } finally {
      delete process.env.AP_TEST_POOL_DEFAULT
    }
  })

  it(`keeps at most ${COMMAND_OUTPUT_MAX_BYTES} bytes of stdout and stderr together`, async () => {
    const output = outputOf(await run("head -c 50000 /dev/zero | tr '\\0' e >&2; head -c 50000 /dev/zero | tr '\\0' o"))
    // The two pipes are read concurrently: which one fills the budget first varies.
    expect(output.stderr).toMatch(/^e*$/)
    expect(output.stdout).toMatch(/^o*$/)
    expect(output.stderr.length + output.stdout.length).toBe(COMMAND_OUTPUT_MAX_BYTES)
    expect(output).toMatchObject({ exit_code: 0, output_truncated: true })
  })

  it("kills the whole process group on timeout", async () => {
    const output = outputOf(await run("echo $$; sleep 100 & sleep 100", { timeout_seconds: 1 }))
    expect(output).toMatchObject({ exit_code: null, timed_out: true })
    expect(output.duration_ms).toBeGreaterThanOrEqual(1000)
    expect(output.duration_ms).toBeLessThan(10_000)
    expect(livingProcessesOf(groupOf(output.stdout))).toEqual([])
  })

  it("kills with SIGKILL what ignores SIGTERM", async () => {
    const output = outputOf(await run("echo $$; trap '' TERM; sleep 100 & sleep 100", { timeout_seconds: 1 }))
    expect(output.timed_out).toBe(true)
    expect(livingProcessesOf(groupOf(output.stdout))).toEqual([])
  })

  it("ends the background processes a command leaves when its shell exits", async () => {
    const output = outputOf(await run("echo $$; sleep 100 & echo started"))
    expect(output).toMatchObject({ exit_code: 0, timed_out: false })
    expect(output.stdout.endsWith("started\n")).toBe(true)
    expect(output.duration_ms).toBeLessThan(10_000)
    expect(livingProcessesOf(groupOf(output.stdout))).toEqual([])
  })

  it("kills the whole process group when the request is cancelled", async () => {
    const pidFile = tree.path("pid")
    const layer = operationServicesLayer([tree.root])
    const group = await Effect.runPromise(Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(execute({
        operation: "tool",
        tool_call_id: "tcl_cancel",
        tool: "run_command",
        input: { command: `echo $$ > ${pidFile}; sleep 100 & sleep 100` },
        cwd: tree.root,
        env: {},
        unset_env: []
      }))
      const group = Number(yield* Effect.promise(() => contentOnceWritten(pidFile)))
      expect(livingProcessesOf(group).length).toBeGreaterThan(0)
      yield* Fiber.interrupt(fiber)
      return group
    }).pipe(Effect.provide(layer)))
    expect(livingProcessesOf(group)).toEqual([])
  })

  it("refuses an invalid timeout", async () => {
    expect(failureOf(await run("true", { timeout_seconds: 100_000 })).code).toBe("invalid_request")
  })
})
