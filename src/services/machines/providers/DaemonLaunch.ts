/**
 * The daemon's command line for a pool machine: `node` runs the project's own daemon script
 * (`src/daemon/main.ts`, TypeScript that Node runs by stripping its types), found by absolute path
 * under the project root, so that a provider can run it from a read-only copy of the project
 * mounted at the same path (docker) or straight from the server's own files (local).
 */
import { join, resolve } from "node:path"
import type { MachineId } from "../../../domain/shared/Ids.ts"

/** The project's root directory (where package.json and node_modules are). */
export const PROJECT_ROOT = resolve(import.meta.dirname, "..", "..", "..", "..")

/** The daemon's state file, inside its work directory (the daemon never lists it to agents). */
export const STATE_FILE_NAME = ".agent-platform-daemon.json"

/** The arguments to `node` that run the daemon of `machineId`, working in `workDirectory`. */
export const daemonArguments = (options: {
  readonly server: string
  readonly machineId: MachineId
  readonly name: string
  readonly workDirectory: string
}): ReadonlyArray<string> => [
  join(PROJECT_ROOT, "src", "daemon", "main.ts"),
  "--server",
  options.server,
  "--name",
  options.name,
  "--dir",
  options.workDirectory,
  "--state",
  join(options.workDirectory, STATE_FILE_NAME)
]
