/**
 * Compiling a valid definition with its resolved names into a CompiledAgentConfig,
 * checking on the way what needs more than one field or the database: names that must resolve,
 * model overrides that may only narrow the model, built-in tool names, "exactly one of" choices.
 * Every problem is an issue positioned at the node it is about. Pure: no IO. The steps are
 * CompileModel, CompileTools, CompileSources and CompileSubagents; this module runs them in the
 * order of the document and assembles the result.
 */
import type { Issue } from "../../shared/Errors.ts"
import type { ResolvedModel } from "../Models.ts"
import type { CompiledAgentConfig, CompiledInteractionHandler } from "./Compiled.ts"
import { type CompileContext, type IssueAt, makeCompileContext } from "./CompileContext.ts"
import { compileModel } from "./CompileModel.ts"
import { compileMachineSources, compileMemoryStores, compileSkills } from "./CompileSources.ts"
import { compileSubagents } from "./CompileSubagents.ts"
import { compileMcp, compileTools } from "./CompileTools.ts"
import { type AgentConfigDefinition, DEFINITION_VERSION, MAX_DEPTH, MAX_SUBAGENTS } from "./Definition.ts"
import type { ModelOverrides } from "./ModelOverrides.ts"
import type { Resolutions } from "./References.ts"

export type { IssueAt } from "./CompileContext.ts"

export interface Compilation {
  readonly compiled: CompiledAgentConfig
  readonly model: ResolvedModel
  readonly modelOverrides: ModelOverrides
  /** JSON pointer of each name in the definition to what it resolved to (docs: "Hashes"). */
  readonly resolved: Readonly<Record<string, string>>
}

export type CompileResult =
  | { readonly _tag: "Compiled"; readonly compilation: Compilation }
  | { readonly _tag: "Invalid"; readonly issues: ReadonlyArray<Issue> }

const interactionHandlers = (definition: AgentConfigDefinition): Record<string, typeof CompiledInteractionHandler.Type> =>
  Object.fromEntries(
    Object.entries(definition.interaction_handlers ?? {}).map(([name, handler]) => [
      name,
      { type: handler.type, url: handler.url, interactions: handler.interactions ?? ["approval", "question"] }
    ])
  )

/** The event webhook and git credentials, their secrets resolved. */
const integrations = (context: CompileContext, definition: AgentConfigDefinition) => {
  const webhook = definition.event_webhook
  const webhookSecret = webhook?.signing_secret === undefined
    ? undefined
    : context.secretId(["event_webhook", "signing_secret"], webhook.signing_secret)
  const git = definition.git_credentials
  const gitSecret = git === undefined ? undefined : context.secretId(["git_credentials", "token_secret"], git.token_secret)
  return {
    ...(webhook === undefined
      ? {}
      : { event_webhook: { url: webhook.url, ...(webhookSecret === undefined ? {} : { signing_secret_id: webhookSecret }) } }),
    ...(git === undefined || gitSecret === undefined
      ? {}
      : { git_credentials: { token_secret_id: gitSecret, ...(git.username === undefined ? {} : { username: git.username }) } })
  }
}

export const compile = (
  definition: AgentConfigDefinition,
  resolutions: Resolutions,
  issueAt: IssueAt
): CompileResult => {
  const { context, issues, resolvedNames } = makeCompileContext(resolutions, issueAt)
  const model = compileModel(context, ["model"], definition.model)
  const supportsTools = model?.model.revision.supportsTools ?? true
  const machineSources = compileMachineSources(context, ["machine_sources"], definition.machine_sources ?? [])
  const tools = compileTools(context, ["tools"], definition.tools, machineSources.length > 0, supportsTools)
  const mcp = compileMcp(context, ["mcp"], definition.mcp, supportsTools)
  const skills = compileSkills(context, ["skills"], definition.skills ?? [])
  const memoryStores = compileMemoryStores(context, ["memory_stores"], definition.memory_stores ?? [])
  const maxDepth = definition.max_depth ?? MAX_DEPTH.default
  const maxSubagents = definition.max_subagents ?? MAX_SUBAGENTS.default
  const subagents = compileSubagents(context, definition.subagents, { model, machineSources, maxDepth, maxSubagents })
  const resolvedIntegrations = integrations(context, definition)

  if (issues.length > 0 || model === undefined) return { _tag: "Invalid", issues }

  const compiled: CompiledAgentConfig = {
    version: definition.version ?? DEFINITION_VERSION,
    instruction: definition.instruction,
    model: model.compiled,
    machine_sources: machineSources,
    tools,
    mcp,
    skills,
    memory_stores: memoryStores,
    subagents,
    interaction_handlers: interactionHandlers(definition),
    ...resolvedIntegrations,
    max_depth: maxDepth,
    max_subagents: maxSubagents
  }
  return {
    _tag: "Compiled",
    compilation: { compiled, model: model.model, modelOverrides: model.overrides, resolved: resolvedNames }
  }
}
