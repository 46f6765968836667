/**
 * The in-process test server with the `local` machine provider on: the operator's key
 * (AGENT_PLATFORM_LOCAL_PROVIDER_KEY), random for each test file, the scripted model provider and
 * fast retries. A pool's auth secret holds LOCAL_PROVIDER_KEY; its machines are daemon processes
 * on this host.
 */
import { Layer, Option, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { fastRetries } from "../runtime/RuntimeLayer.ts"
import { ScriptedProvider } from "./ScriptedProvider.ts"
import { TestAppLive } from "./TestApp.ts"

export const LOCAL_PROVIDER_KEY = `local-key-${randomBytes(8).toString("hex")}`

export const LocalPoolServerLive = Layer.mergeAll(
  TestAppLive({ localProviderKey: Option.some(Redacted.make(LOCAL_PROVIDER_KEY)) }),
  ScriptedProvider.layer
).pipe(Layer.provide(fastRetries))

/** Whether a process naming `id` (a machine's or its pool's) runs on this host. */
export const daemonRuns = (id: string) => spawnSync("pgrep", ["-f", id]).status === 0

/** Kills (SIGKILL) every process naming one of `ids`: a test's last resort for the daemons it started. */
export const killDaemonsNaming = (ids: Iterable<string>) => {
  for (const id of ids) spawnSync("pkill", ["-KILL", "-f", id])
}
