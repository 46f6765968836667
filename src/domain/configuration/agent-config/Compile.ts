/**
 * Compiling a valid definition with its resolved names into a CompiledAgentConfig (spec 2.6),
 * checking on the way what needs more than one field or the database: names that must resolve,
 * model overrides that may only narrow the model, built-in tool names, "exactly one of" choices.
 * Every problem is an issue positioned at the node it is about. Pure: no IO.
 */
import type { Issue } from "../../shared/Errors.ts"
import type { AgentConfigId, MachinePoolId, SecretId } from "../../shared/Ids.ts"
import type { ResolvedModel } from "../Models.ts"
import { BUILTIN_TOOLS, isBuiltinTool } from "./BuiltinTools.ts"
import type {
  CompiledAgentConfig,
  CompiledAgentModel,
  CompiledInlineSubagent,
  CompiledMachineSource,
  CompiledMcpServer,
  CompiledSkill,
  CompiledSubagent,
  CompiledTool
} from "./Compiled.ts"
import {
  type AgentConfigDefinition,
  DEFINITION_VERSION,
  MAX_DEPTH,
  MAX_SUBAGENTS,
  type MachineSource,
  type McpServer,
  type ModelReference,
  type SkillReference,
  type ToolEntry
} from "./Definition.ts"
import { pointerOf } from "../../shared/JsonPointer.ts"
import { modelKey, type Resolutions, skillKey } from "./References.ts"
import type { Anchor } from "./Source.ts"

type Path = ReadonlyArray<PropertyKey>
export type IssueAt = (path: Path, message: string, anchor?: Anchor) => Issue

/** The model overrides a config sets, kept to render AgentConfigModel from later revisions. */
export interface ModelOverrides {
  readonly context_window_tokens?: number
  readonly max_output_tokens?: number
  readonly cache_retention?: ResolvedModel["revision"]["defaultCacheRetention"]
  readonly reasoning_effort?: string
}

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

const pointer = pointerOf

export const overridesOf = (ref: ModelReference): ModelOverrides => ({
  ...(ref.context_window_tokens === undefined ? {} : { context_window_tokens: ref.context_window_tokens }),
  ...(ref.max_output_tokens === undefined ? {} : { max_output_tokens: ref.max_output_tokens }),
  ...(ref.cache_retention === undefined ? {} : { cache_retention: ref.cache_retention }),
  ...(ref.reasoning === undefined ? {} : { reasoning_effort: ref.reasoning.effort })
})

/** The output cap per request: the override, else the revision's default, never above the ceiling. */
export const effectiveOutputTokens = (revision: ResolvedModel["revision"], overrides: ModelOverrides) => {
  const ceiling = overrides.max_output_tokens !== undefined && revision.maxOutputTokens !== null
    ? Math.min(overrides.max_output_tokens, revision.maxOutputTokens)
    : overrides.max_output_tokens ?? revision.maxOutputTokens
  const perRequest = revision.defaultMaxOutputTokens === null
    ? overrides.max_output_tokens ?? null
    : ceiling === null
    ? revision.defaultMaxOutputTokens
    : Math.min(revision.defaultMaxOutputTokens, ceiling)
  return { ceiling, perRequest }
}

export const compile = (
  definition: AgentConfigDefinition,
  resolutions: Resolutions,
  issueAt: IssueAt
): CompileResult => {
  const issues: Array<Issue> = []
  const resolved: Record<string, string> = {}
  const problem = (path: Path, message: string, anchor?: Anchor) => void issues.push(issueAt(path, message, anchor))

  const secretId = (path: Path, name: string): SecretId | undefined => {
    const id = resolutions.secrets.get(name)
    if (id === undefined) {
      problem(
        path,
        `no secret named "${name}" is usable by this project; check the name, or grant the organization secret to the project`
      )
    } else {
      resolved[pointer(path)] = id
    }
    return id
  }

  const compileModel = (path: Path, ref: ModelReference) => {
    const model = resolutions.models.get(modelKey(ref))
    if (model === undefined) {
      problem(
        [...path, "name"],
        `no model "${ref.name}" of provider config "${ref.provider_config}" is granted to this project; ` +
          "check both names, or grant the model to the project"
      )
      return undefined
    }
    resolved[pointer(path)] = model.model.id
    const revision = model.revision
    const before = issues.length
    if (ref.context_window_tokens !== undefined && ref.context_window_tokens > revision.contextWindowTokens) {
      problem(
        [...path, "context_window_tokens"],
        `must be at most ${revision.contextWindowTokens}, the context window of model "${ref.name}"; an override may only narrow it`
      )
    }
    const contextWindow = ref.context_window_tokens ?? revision.contextWindowTokens
    if (ref.max_output_tokens !== undefined) {
      if (revision.maxOutputTokens !== null && ref.max_output_tokens > revision.maxOutputTokens) {
        problem(
          [...path, "max_output_tokens"],
          `must be at most ${revision.maxOutputTokens}, the output limit of model "${ref.name}"; an override may only narrow it`
        )
      } else if (ref.max_output_tokens >= contextWindow) {
        problem([...path, "max_output_tokens"], `must be less than the context window (${contextWindow})`)
      }
    }
    if (ref.reasoning !== undefined) {
      if (!revision.supportsReasoning) {
        problem([...path, "reasoning"], `model "${ref.name}" does not support reasoning; remove reasoning`)
      } else if (!revision.supportedReasoningEfforts.includes(ref.reasoning.effort)) {
        problem(
          [...path, "reasoning", "effort"],
          `must be one of the efforts model "${ref.name}" supports: ${revision.supportedReasoningEfforts.join(", ")}`
        )
      }
    }
    if (issues.length > before) return undefined
    const overrides = overridesOf(ref)
    const { perRequest } = effectiveOutputTokens(revision, overrides)
    const compiled: CompiledAgentModel = {
      configured_model_id: model.model.id,
      context_window_tokens: contextWindow,
      ...(perRequest === null ? {} : { default_max_output_tokens: perRequest }),
      cache_retention: ref.cache_retention ?? revision.defaultCacheRetention,
      reasoning: revision.supportsReasoning
        ? { effort: ref.reasoning?.effort ?? revision.defaultReasoningEffort }
        : {}
    }
    return { model, compiled, overrides }
  }

  const compileTools = (
    path: Path,
    tools: Readonly<Record<string, ToolEntry>> | undefined,
    hasMachine: boolean,
    supportsTools: boolean
  ): Record<string, CompiledTool> => {
    const compiled: Record<string, CompiledTool> = {}
    for (const [name, tool] of Object.entries(BUILTIN_TOOLS)) {
      compiled[name] = {
        enabled: supportsTools && (hasMachine || !tool.needsMachine),
        permission: tool.permission,
        type: "built_in",
        description: tool.description
      }
    }
    for (const [name, entry] of Object.entries(tools ?? {})) {
      const at = [...path, name]
      if (entry.type === "custom") {
        if (isBuiltinTool(name)) {
          problem(at, `"${name}" is a built-in tool; give the custom tool another name`, "key")
          continue
        }
        if (entry.description === undefined) problem([...at, "description"], "is required for a custom tool")
        if (entry.input_schema === undefined) {
          problem([...at, "input_schema"], "is required for a custom tool")
        } else if (entry.input_schema.type !== "object") {
          problem([...at, "input_schema"], "must be a JSON Schema of type \"object\" (set type: object)")
        }
        const enabled = entry.enabled ?? true
        if (enabled && !supportsTools) problem(at, "the model does not support tools; disable or remove this tool")
        if (entry.description === undefined || entry.input_schema === undefined) continue
        compiled[name] = {
          enabled,
          permission: entry.permission ?? "allow",
          type: "custom",
          description: entry.description,
          input_schema: entry.input_schema
        }
        continue
      }
      if (!isBuiltinTool(name)) {
        problem(
          at,
          `no built-in tool is named "${name}" (built-ins: ${Object.keys(BUILTIN_TOOLS).join(", ")}); ` +
            "for your own tool set type: custom",
          "key"
        )
        continue
      }
      const builtin = BUILTIN_TOOLS[name]
      if (entry.description !== undefined) problem([...at, "description"], "only a custom tool takes a description", "key")
      if (entry.input_schema !== undefined) {
        problem([...at, "input_schema"], "only a custom tool takes an input_schema", "key")
      }
      const enabled = entry.enabled ?? compiled[name].enabled
      if (entry.enabled === true && builtin.needsMachine && !hasMachine) {
        problem([...at, "enabled"], `"${name}" runs on a machine; add a machine source to enable it`)
      }
      if (entry.enabled === true && !supportsTools) {
        problem([...at, "enabled"], "the model does not support tools")
      }
      compiled[name] = { ...compiled[name], enabled, permission: entry.permission ?? builtin.permission }
    }
    return compiled
  }

  const compileMcp = (
    path: Path,
    servers: Readonly<Record<string, McpServer>> | undefined,
    supportsTools: boolean
  ): Record<string, CompiledMcpServer> => {
    const compiled: Record<string, CompiledMcpServer> = {}
    for (const [name, server] of Object.entries(servers ?? {})) {
      const at = [...path, name]
      const defaultEnabled = server.default_enabled ?? true
      if (defaultEnabled && !supportsTools) {
        problem(at, "the model does not support tools; set default_enabled: false or remove this server")
      }
      const authSecret = server.auth === undefined ? undefined : secretId([...at, "auth", "secret"], server.auth.secret)
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

  const compileMachineSources = (path: Path, sources: ReadonlyArray<MachineSource>): Array<CompiledMachineSource> =>
    sources.map((source, index) => {
      const at = [...path, index]
      if ((source.machine_id === undefined) === (source.machine_pool_id === undefined)) {
        problem(at, "give exactly one of machine_id or machine_pool_id")
      }
      if (
        source.initial_num_machines !== undefined && source.max_machines !== undefined &&
        source.initial_num_machines > source.max_machines
      ) {
        problem([...at, "initial_num_machines"], `must be at most max_machines (${source.max_machines})`)
      }
      const { secret_env_overlay, ...rest } = source
      let secretEnv: Record<string, SecretId | null> | undefined
      if (secret_env_overlay !== undefined) {
        secretEnv = {}
        for (const [env, name] of Object.entries(secret_env_overlay)) {
          if (source.env_overlay !== undefined && Object.hasOwn(source.env_overlay, env)) {
            problem([...at, "secret_env_overlay", env], `${env} is set in env_overlay too; set it in one of them`, "key")
          }
          if (name === null) {
            secretEnv[env] = null
          } else {
            const id = secretId([...at, "secret_env_overlay", env], name)
            if (id !== undefined) secretEnv[env] = id
          }
        }
      }
      return {
        ...rest,
        ...(rest.machine_pool_id === undefined ? {} : { machine_pool_id: rest.machine_pool_id as MachinePoolId }),
        ...(secretEnv === undefined ? {} : { secret_env_overlay: secretEnv })
      }
    })

  const compileSkills = (path: Path, refs: ReadonlyArray<SkillReference>): Array<CompiledSkill> => {
    const compiled: Array<CompiledSkill> = []
    const seen = new Set<string>()
    refs.forEach((ref, index) => {
      const at = [...path, index]
      if ((ref.name === undefined) === (ref.id === undefined)) {
        problem(at, "give exactly one of name or id")
        return
      }
      const field = ref.id !== undefined ? "id" : "name"
      const resolution = resolutions.skills.get(skillKey(ref))
      if (resolution === undefined) {
        problem(
          [...at, field],
          `no skill ${field === "id" ? ref.id : `named "${ref.name}"`} is usable by this project ` +
            "(owned by it, granted to it, or personal to you); check the name or grant the skill to the project"
        )
        return
      }
      if (resolution._tag === "Ambiguous") {
        problem(
          [...at, field],
          `several skills named "${ref.name}" are granted to this project (${resolution.ids.join(", ")}); refer to one by id`
        )
        return
      }
      if (seen.has(resolution.id)) {
        problem(at, `skill ${resolution.id} is listed twice`)
        return
      }
      seen.add(resolution.id)
      if (ref.version !== undefined && ref.version > resolution.latestVersion) {
        problem([...at, "version"], `skill "${resolution.name}" has versions 1 to ${resolution.latestVersion}`)
        return
      }
      const version = ref.version ?? resolution.latestVersion
      resolved[pointer(at)] = `${resolution.id}@${version}`
      compiled.push({ skill_id: resolution.id, name: resolution.name, version })
    })
    return compiled
  }

  // ---------------------------------------------------------------- the config itself

  const model = compileModel(["model"], definition.model)
  const supportsTools = model?.model.revision.supportsTools ?? true
  const machineSources = compileMachineSources(["machine_sources"], definition.machine_sources ?? [])
  const tools = compileTools(["tools"], definition.tools, machineSources.length > 0, supportsTools)
  const mcp = compileMcp(["mcp"], definition.mcp, supportsTools)
  const skills = compileSkills(["skills"], definition.skills ?? [])

  const memoryStores = (definition.memory_stores ?? []).map((store, index) => ({
    name: store.name,
    access: store.access ?? ("read_write" as const),
    index
  }))
  const storeNames = new Set<string>()
  for (const store of memoryStores) {
    if (storeNames.has(store.name)) problem(["memory_stores", store.index, "name"], `"${store.name}" is listed twice`)
    storeNames.add(store.name)
  }

  const maxDepth = definition.max_depth ?? MAX_DEPTH.default
  const maxSubagents = definition.max_subagents ?? MAX_SUBAGENTS.default
  const subagentEntries = Object.entries(definition.subagents ?? {})
  if (subagentEntries.length > 0 && maxDepth < 2) {
    problem(["subagents"], `max_depth ${maxDepth} leaves no level for subagents; raise max_depth to at least 2`, "key")
  }
  const subagents: Record<string, CompiledSubagent> = {}
  for (const [name, sub] of subagentEntries) {
    const at = ["subagents", name]
    if ((sub.agent_config_id === undefined) === (sub.instruction === undefined)) {
      problem(at, "give exactly one of agent_config_id (another config of this project) or instruction (inline)")
      continue
    }
    if (sub.agent_config_id !== undefined) {
      for (const field of ["model", "tools", "mcp", "skills", "machine_sources"] as const) {
        if (sub[field] !== undefined) {
          problem([...at, field], "only an inline subagent takes this; the referenced config sets its own", "key")
        }
      }
      const target = resolutions.agentConfigs.get(sub.agent_config_id)
      if (target === undefined) {
        problem([...at, "agent_config_id"], `no agent config ${sub.agent_config_id} in this project`)
        continue
      }
      subagents[name] = {
        description: sub.description,
        agent_config_id: sub.agent_config_id as AgentConfigId,
        max_depth: Math.max(1, Math.min(maxDepth - 1, target.maxDepth)),
        max_subagents: Math.min(maxSubagents, target.maxSubagents)
      }
      continue
    }
    const subModel = sub.model === undefined ? model : compileModel([...at, "model"], sub.model)
    const subSupportsTools = subModel?.model.revision.supportsTools ?? true
    const subMachines = sub.machine_sources === undefined
      ? machineSources
      : compileMachineSources([...at, "machine_sources"], sub.machine_sources)
    const inline: CompiledInlineSubagent | undefined = subModel === undefined ? undefined : {
      instruction: sub.instruction!,
      model: subModel.compiled,
      tools: compileTools([...at, "tools"], sub.tools, subMachines.length > 0, subSupportsTools),
      mcp: compileMcp([...at, "mcp"], sub.mcp, subSupportsTools),
      skills: compileSkills([...at, "skills"], sub.skills ?? []),
      machine_sources: subMachines
    }
    if (inline !== undefined) {
      subagents[name] = {
        description: sub.description,
        definition: inline,
        max_depth: Math.max(1, maxDepth - 1),
        max_subagents: maxSubagents
      }
    }
  }

  const webhook = definition.event_webhook
  const webhookSecret = webhook?.signing_secret === undefined
    ? undefined
    : secretId(["event_webhook", "signing_secret"], webhook.signing_secret)
  const git = definition.git_credentials
  const gitSecret = git === undefined ? undefined : secretId(["git_credentials", "token_secret"], git.token_secret)

  if (issues.length > 0 || model === undefined) return { _tag: "Invalid", issues }

  const compiled: CompiledAgentConfig = {
    version: definition.version ?? DEFINITION_VERSION,
    instruction: definition.instruction,
    model: model.compiled,
    machine_sources: machineSources,
    tools,
    mcp,
    skills,
    memory_stores: memoryStores.map(({ access, name }) => ({ name, access })),
    subagents,
    interaction_handlers: Object.fromEntries(
      Object.entries(definition.interaction_handlers ?? {}).map(([name, handler]) => [
        name,
        { type: handler.type, url: handler.url, interactions: handler.interactions ?? ["approval", "question"] }
      ])
    ),
    ...(webhook === undefined
      ? {}
      : { event_webhook: { url: webhook.url, ...(webhookSecret === undefined ? {} : { signing_secret_id: webhookSecret }) } }),
    ...(git === undefined || gitSecret === undefined
      ? {}
      : { git_credentials: { token_secret_id: gitSecret, ...(git.username === undefined ? {} : { username: git.username }) } }),
    max_depth: maxDepth,
    max_subagents: maxSubagents
  }
  return {
    _tag: "Compiled",
    compilation: { compiled, model: model.model, modelOverrides: model.overrides, resolved }
  }
}
