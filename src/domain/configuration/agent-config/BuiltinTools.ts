/**
 * The built-in tools every compiled config lists (docs/agent-configs.md, "Default tools").
 * `ask_question` is run by the platform itself (it opens a question for a person); the others
 * run on a machine from the config's machine sources, so they are enabled by default only when
 * the config has one. A `tools` entry without `type: custom` overrides one of these.
 */
import type { ToolPermission } from "./Definition.ts"

export interface BuiltinTool {
  readonly description: string
  readonly permission: ToolPermission
  /** Runs on a machine of the config's machine sources. */
  readonly needsMachine: boolean
}

export const BUILTIN_TOOLS: Readonly<Record<string, BuiltinTool>> = {
  ask_question: {
    description: "Ask a person a question and wait for the answer",
    permission: "allow",
    needsMachine: false
  },
  read_file: { description: "Read a file on the machine", permission: "allow", needsMachine: true },
  list_files: { description: "List the files of a directory on the machine", permission: "allow", needsMachine: true },
  search_files: { description: "Search file contents on the machine", permission: "allow", needsMachine: true },
  write_file: { description: "Create or replace a file on the machine", permission: "ask", needsMachine: true },
  edit_file: { description: "Replace text in a file on the machine", permission: "ask", needsMachine: true },
  run_command: { description: "Run a shell command on the machine", permission: "ask", needsMachine: true }
}

export const isBuiltinTool = (name: string): boolean => Object.hasOwn(BUILTIN_TOOLS, name)
