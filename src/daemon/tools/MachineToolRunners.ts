/** The function that runs each built-in machine tool. */
import type { ChildProcessSpawner } from "effect/process"
import type { Effect } from "effect"
import type { MachineToolInput, MachineToolName, MachineToolOutput } from "../../domain/machines/MachineTools.ts"
import type { Directories } from "../Directories.ts"
import type { OperationError } from "../OperationError.ts"
import type { CommandGroups } from "./CommandGroups.ts"
import { editFile } from "./EditFile.ts"
import { listFiles } from "./ListFiles.ts"
import { readFile } from "./ReadFile.ts"
import { runCommand } from "./RunCommand.ts"
import { searchFiles } from "./SearchFiles.ts"
import type { ToolContext } from "./ToolContext.ts"
import { writeFile } from "./WriteFile.ts"

/** What the operations run with: the machine's directories, a process spawner, the commands' watcher. */
export type ToolServices = Directories | ChildProcessSpawner.ChildProcessSpawner | CommandGroups

export const TOOL_RUNNERS: {
  readonly [T in MachineToolName]: (
    input: MachineToolInput<T>,
    context: ToolContext
  ) => Effect.Effect<MachineToolOutput<T>, OperationError, ToolServices>
} = {
  read_file: readFile,
  list_files: listFiles,
  search_files: searchFiles,
  write_file: writeFile,
  edit_file: editFile,
  run_command: runCommand
}
