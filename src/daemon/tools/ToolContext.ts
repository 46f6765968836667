/**
 * What a tool call runs with: its working directory (resolved, inside the directories), its
 * environment overlay, and the variables of the daemon's own environment its commands do not inherit.
 */
import { Effect } from "effect"
import { absolutePath, type Directories, resolveExisting } from "../Directories.ts"
import type { OperationError } from "../OperationError.ts"

export interface ToolContext {
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly unsetEnv: ReadonlyArray<string>
}

/** The environment of a command: the daemon's own without the unset variables, under the overlay. */
export const commandEnvironment = (context: ToolContext): Record<string, string | undefined> => {
  const inherited: Record<string, string | undefined> = { ...process.env }
  for (const name of context.unsetEnv) delete inherited[name]
  return { ...inherited, ...context.env }
}

/** A path of the call, resolved to its real path inside the directories. */
export const resolveInput = (context: ToolContext, path: string): Effect.Effect<string, OperationError, Directories> =>
  Effect.flatMap(absolutePath(path, context.cwd), resolveExisting)
