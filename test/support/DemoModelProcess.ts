/**
 * The demo model (`npm run demo-model`, src/demo/main.ts) as a real child process on a free
 * loopback port, for tests and the examples' test: `DemoModelProcess.layer` starts it and stops
 * it with the scope.
 */
import { Context, Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { START_TIMEOUT_MS } from "./Processes.ts"

const ROOT = join(import.meta.dirname, "..", "..")

export interface DemoModelShape {
  /** The base URL to give a provider config, e.g. http://127.0.0.1:PORT/v1 */
  readonly baseUrl: string
  /** What it printed so far (one line per answer). */
  readonly output: () => string
}

const start = () =>
  Effect.callback<{ child: ChildProcess; shape: DemoModelShape }, Error>((resume) => {
    const child = spawn(process.execPath, ["src/demo/main.ts"], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      resume(Effect.fail(new Error(`the demo model did not start within ${START_TIMEOUT_MS} ms:\n${output}`)))
    }, START_TIMEOUT_MS)
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const listening = /listening on (http:\/\/\S+\/v1)/.exec(output)
      if (listening !== null && timer.hasRef()) {
        clearTimeout(timer)
        timer.unref()
        resume(Effect.succeed({ child, shape: { baseUrl: listening[1], output: () => output } }))
      }
    }
    child.stdout!.on("data", collect)
    child.stderr!.on("data", collect)
    child.once("exit", (code) => {
      if (!timer.hasRef()) return
      clearTimeout(timer)
      timer.unref()
      resume(Effect.fail(new Error(`the demo model exited (${code}) before listening:\n${output}`)))
    })
  })

const stop = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGTERM")
  })

/** For tests outside Effect: the started demo model, and `stop`. */
export const startDemoModel = async () => {
  const { child, shape } = await Effect.runPromise(start())
  return { ...shape, stop: () => Effect.runPromise(stop(child)) }
}

export class DemoModelProcess extends Context.Service<DemoModelProcess, DemoModelShape>()("test/DemoModelProcess") {
  static readonly layer = Layer.effect(
    DemoModelProcess,
    Effect.map(Effect.acquireRelease(Effect.orDie(start()), ({ child }) => stop(child)), ({ shape }) => shape)
  )
}
