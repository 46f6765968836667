/** What a tool call runs with: its working directory (resolved, inside the directories) and its environment overlay. */
import { Effect } from "effect"
import { absolutePath, type Directories, resolveExisting } from "../Directories.ts"
import type { OperationError } from "../OperationError.ts"

export interface ToolContext {
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

/** A path of the call, resolved to its real path inside the directories. */
export const resolveInput = (context: ToolContext, path: string): Effect.Effect<string, OperationError, Directories> =>
  Effect.flatMap(absolutePath(path, context.cwd), resolveExisting)
