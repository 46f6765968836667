/**
 * The tools a turn offers the model: the enabled tools of the compiled config. Custom tools
 * carry their own description and input schema; built-in tools get theirs here.
 */
import { BUILTIN_TOOLS } from "../../domain/configuration/agent-config/BuiltinTools.ts"
import type { CompiledTool } from "../../domain/configuration/agent-config/Compiled.ts"
import type { ToolDefinition } from "./ModelMessages.ts"

export const ASK_QUESTION = "ask_question"

const stringProperty = (description: string) => ({ type: "string", description })

const object = (properties: Record<string, unknown>, required: ReadonlyArray<string>) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false
})

const BUILTIN_INPUT_SCHEMAS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  ask_question: object({ question: stringProperty("The question to ask, in full") }, ["question"]),
  read_file: object({ path: stringProperty("Path of the file") }, ["path"]),
  list_files: object({ path: stringProperty("Path of the directory") }, ["path"]),
  search_files: object({ pattern: stringProperty("Text or regular expression to find"), path: stringProperty("Directory to search") }, ["pattern"]),
  write_file: object({ path: stringProperty("Path of the file"), content: stringProperty("The whole new content") }, ["path", "content"]),
  edit_file: object(
    { path: stringProperty("Path of the file"), old_text: stringProperty("Text to replace"), new_text: stringProperty("Replacement") },
    ["path", "old_text", "new_text"]
  ),
  run_command: object({ command: stringProperty("Shell command to run") }, ["command"])
}

const EMPTY_OBJECT_SCHEMA = { type: "object", properties: {} }

export const toolDefinitions = (tools: Readonly<Record<string, CompiledTool>>): ReadonlyArray<ToolDefinition> =>
  Object.entries(tools)
    .filter(([, tool]) => tool.enabled)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, tool]) => ({
      name,
      description: tool.description ?? BUILTIN_TOOLS[name]?.description ?? name,
      input_schema: tool.input_schema ?? BUILTIN_INPUT_SCHEMAS[name] ?? EMPTY_OBJECT_SCHEMA
    }))

/** The text of an `ask_question` call's question. */
export const questionOf = (input: Readonly<Record<string, unknown>>) =>
  typeof input.question === "string" ? input.question : JSON.stringify(input)
