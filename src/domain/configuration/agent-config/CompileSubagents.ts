/**
 * Compiling subagents: another config of the project (`agent_config_id`), whose limits it keeps,
 * or an inline one (`instruction`), resolved like its parent and inheriting what it does not set.
 */
import type { AgentConfigId } from "../../shared/Ids.ts"
import type { CompiledInlineSubagent, CompiledMachineSource, CompiledSubagent } from "./Compiled.ts"
import type { CompileContext } from "./CompileContext.ts"
import { type CompiledModel, compileModel } from "./CompileModel.ts"
import { compileMachineSources, compileSkills } from "./CompileSources.ts"
import { compileMcp, compileTools } from "./CompileTools.ts"
import type { Subagent } from "./Definition.ts"

/** What a subagent inherits from its parent config. */
export interface Parent {
  readonly model: CompiledModel | undefined
  readonly machineSources: ReadonlyArray<CompiledMachineSource>
  readonly maxDepth: number
  readonly maxSubagents: number
}

const INLINE_ONLY = ["model", "tools", "mcp", "skills", "machine_sources"] as const

const referenced = (
  context: CompileContext,
  name: string,
  sub: Subagent,
  agentConfigId: string,
  parent: Parent
): CompiledSubagent | undefined => {
  const at = ["subagents", name]
  for (const field of INLINE_ONLY) {
    if (sub[field] !== undefined) {
      context.problem([...at, field], "only an inline subagent takes this; the referenced config sets its own", "key")
    }
  }
  const target = context.resolutions.agentConfigs.get(agentConfigId)
  if (target === undefined) {
    context.problem([...at, "agent_config_id"], `no agent config ${agentConfigId} in this project`)
    return undefined
  }
  return {
    description: sub.description,
    agent_config_id: agentConfigId as AgentConfigId,
    max_depth: Math.max(1, Math.min(parent.maxDepth - 1, target.maxDepth)),
    max_subagents: Math.min(parent.maxSubagents, target.maxSubagents)
  }
}

const inline = (
  context: CompileContext,
  name: string,
  sub: Subagent,
  instruction: string,
  parent: Parent
): CompiledSubagent | undefined => {
  const at = ["subagents", name]
  const model = sub.model === undefined ? parent.model : compileModel(context, [...at, "model"], sub.model)
  const supportsTools = model?.model.revision.supportsTools ?? true
  const machines = sub.machine_sources === undefined
    ? parent.machineSources
    : compileMachineSources(context, [...at, "machine_sources"], sub.machine_sources)
  if (model === undefined) return undefined
  const definition: CompiledInlineSubagent = {
    instruction,
    model: model.compiled,
    tools: compileTools(context, [...at, "tools"], sub.tools, machines.length > 0, supportsTools),
    mcp: compileMcp(context, [...at, "mcp"], sub.mcp, supportsTools),
    skills: compileSkills(context, [...at, "skills"], sub.skills ?? []),
    machine_sources: machines
  }
  return {
    description: sub.description,
    definition,
    max_depth: Math.max(1, parent.maxDepth - 1),
    max_subagents: parent.maxSubagents
  }
}

export const compileSubagents = (
  context: CompileContext,
  subagents: Readonly<Record<string, Subagent>> | undefined,
  parent: Parent
): Record<string, CompiledSubagent> => {
  const entries = Object.entries(subagents ?? {})
  if (entries.length > 0 && parent.maxDepth < 2) {
    context.problem(
      ["subagents"],
      `max_depth ${parent.maxDepth} leaves no level for subagents; raise max_depth to at least 2`,
      "key"
    )
  }
  const compiled: Record<string, CompiledSubagent> = {}
  for (const [name, sub] of entries) {
    const result = sub.agent_config_id !== undefined && sub.instruction === undefined
      ? referenced(context, name, sub, sub.agent_config_id, parent)
      : sub.instruction !== undefined && sub.agent_config_id === undefined
      ? inline(context, name, sub, sub.instruction, parent)
      : context.problem(
        ["subagents", name],
        "give exactly one of agent_config_id (another config of this project) or instruction (inline)"
      )
    if (result !== undefined) compiled[name] = result
  }
  return compiled
}
