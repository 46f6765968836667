/**
 * Compiling the tools a config offers: every built-in tool, enabled by default when it can run
 * (docs/agent-configs.md, "Default tools"), overridden or joined by the `tools` entries; and the
 * MCP servers with their credentials.
 */
import { BUILTIN_TOOLS, isBuiltinTool } from "./BuiltinTools.ts"
import type { CompiledMcpServer, CompiledTool } from "./Compiled.ts"
import type { CompileContext, Path } from "./CompileContext.ts"
import type { McpServer, ToolEntry } from "./Definition.ts"

const builtinDefaults = (hasMachine: boolean, supportsTools: boolean): Record<string, CompiledTool> =>
  Object.fromEntries(
    Object.entries(BUILTIN_TOOLS).map(([name, tool]) => [name, {
      enabled: supportsTools && (hasMachine || !tool.needsMachine),
      permission: tool.permission,
      type: "built_in" as const,
      description: tool.description
    }])
  )

/** A `type: custom` entry; undefined (with problems recorded) when it lacks what a custom tool needs. */
const compileCustom = (
  context: CompileContext,
  at: Path,
  name: string,
  entry: ToolEntry,
  supportsTools: boolean
): CompiledTool | undefined => {
  if (isBuiltinTool(name)) {
    context.problem(at, `"${name}" is a built-in tool; give the custom tool another name`, "key")
    return undefined
  }
  if (entry.description === undefined) context.problem([...at, "description"], "is required for a custom tool")
  if (entry.input_schema === undefined) {
    context.problem([...at, "input_schema"], "is required for a custom tool")
  } else if (entry.input_schema.type !== "object") {
    context.problem([...at, "input_schema"], "must be a JSON Schema of type \"object\" (set type: object)")
  }
  const enabled = entry.enabled ?? true
  if (enabled && !supportsTools) context.problem(at, "the model does not support tools; disable or remove this tool")
  if (entry.description === undefined || entry.input_schema === undefined) return undefined
  return {
    enabled,
    permission: entry.permission ?? "allow",
    type: "custom",
    description: entry.description,
    input_schema: entry.input_schema
  }
}

/** An entry that overrides a built-in tool's `enabled` or `permission`. */
const compileOverride = (
  context: CompileContext,
  at: Path,
  name: string,
  entry: ToolEntry,
  current: CompiledTool,
  hasMachine: boolean,
  supportsTools: boolean
): CompiledTool | undefined => {
  if (!isBuiltinTool(name)) {
    context.problem(
      at,
      `no built-in tool is named "${name}" (built-ins: ${Object.keys(BUILTIN_TOOLS).join(", ")}); ` +
        "for your own tool set type: custom",
      "key"
    )
    return undefined
  }
  const builtin = BUILTIN_TOOLS[name]
  if (entry.description !== undefined) context.problem([...at, "description"], "only a custom tool takes a description", "key")
  if (entry.input_schema !== undefined) {
    context.problem([...at, "input_schema"], "only a custom tool takes an input_schema", "key")
  }
  if (entry.enabled === true && builtin.needsMachine && !hasMachine) {
    context.problem([...at, "enabled"], `"${name}" runs on a machine; add a machine source to enable it`)
  }
  if (entry.enabled === true && !supportsTools) {
    context.problem([...at, "enabled"], "the model does not support tools")
  }
  return { ...current, enabled: entry.enabled ?? current.enabled, permission: entry.permission ?? builtin.permission }
}

export const compileTools = (
  context: CompileContext,
  path: Path,
  tools: Readonly<Record<string, ToolEntry>> | undefined,
  hasMachine: boolean,
  supportsTools: boolean
): Record<string, CompiledTool> => {
  const compiled = builtinDefaults(hasMachine, supportsTools)
  for (const [name, entry] of Object.entries(tools ?? {})) {
    const at = [...path, name]
    const tool = entry.type === "custom"
      ? compileCustom(context, at, name, entry, supportsTools)
      : compileOverride(context, at, name, entry, compiled[name], hasMachine, supportsTools)
    if (tool !== undefined) compiled[name] = tool
  }
  return compiled
}

export const compileMcp = (
  context: CompileContext,
  path: Path,
  servers: Readonly<Record<string, McpServer>> | undefined,
  supportsTools: boolean
): Record<string, CompiledMcpServer> => {
  const compiled: Record<string, CompiledMcpServer> = {}
  for (const [name, server] of Object.entries(servers ?? {})) {
    const at = [...path, name]
    const defaultEnabled = server.default_enabled ?? true
    if (defaultEnabled && !supportsTools) {
      context.problem(at, "the model does not support tools; set default_enabled: false or remove this server")
    }
    const authSecret = server.auth === undefined ? undefined : context.secretId([...at, "auth", "secret"], server.auth.secret)
    compiled[name] = {
      url: server.url,
      default_enabled: defaultEnabled,
      permission: server.permission ?? "ask",
      ...(server.auth === undefined || authSecret === undefined
        ? {}
        : { auth: { type: server.auth.type, secret_id: authSecret } })
    }
  }
  return compiled
}
