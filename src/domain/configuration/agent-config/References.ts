/**
 * The names and ids a definition refers to, which the service resolves against the database
 * before compiling, and the shape of what it found.
 */
import type { MachineId, MachinePoolId, SecretId, SkillId } from "../../shared/Ids.ts"
import type { ResolvedModel } from "../Models.ts"
import type { AgentConfigDefinition, McpServer, MachineSource, ModelReference, SkillReference } from "./Definition.ts"

/** Each name and id once: the service looks each one up (a config may name one skill 8,000 times). */
export interface References {
  readonly models: ReadonlyArray<ModelReference>
  readonly secretNames: ReadonlyArray<string>
  readonly skills: ReadonlyArray<SkillReference>
  readonly agentConfigIds: ReadonlyArray<string>
  readonly machineIds: ReadonlyArray<string>
  readonly machinePoolIds: ReadonlyArray<MachinePoolId>
}

export type SkillResolution =
  | { readonly _tag: "Found"; readonly id: SkillId; readonly name: string; readonly latestVersion: number }
  | { readonly _tag: "Ambiguous"; readonly ids: ReadonlyArray<SkillId> }

/** What the names resolved to; a name absent from its map did not resolve. */
export interface Resolutions {
  readonly models: ReadonlyMap<string, ResolvedModel>
  /** The referenced model provider config names (as written) that exist in the organization. */
  readonly providerConfigs: ReadonlySet<string>
  readonly secrets: ReadonlyMap<string, SecretId>
  readonly skills: ReadonlyMap<string, SkillResolution>
  readonly agentConfigs: ReadonlyMap<string, { readonly maxDepth: number; readonly maxSubagents: number }>
  /** The machines the project may use, by the id or name a source gave. */
  readonly machines: ReadonlyMap<string, MachineId>
  /** The referenced machine pools that are pools of the organization granted to the project. */
  readonly machinePools: ReadonlySet<string>
}

export const modelKey = (ref: ModelReference): string => JSON.stringify([ref.provider_config, ref.name])
export const skillKey = (ref: SkillReference): string =>
  ref.id !== undefined ? `id:${ref.id}` : `name:${ref.name ?? ""}`

/** `items` without those whose key an earlier one has. */
const distinct = <A>(items: ReadonlyArray<A>, key: (item: A) => string): Array<A> => {
  const seen = new Set<string>()
  return items.filter((item) => {
    const itemKey = key(item)
    if (seen.has(itemKey)) return false
    seen.add(itemKey)
    return true
  })
}

const machineSecrets = (sources: ReadonlyArray<MachineSource> | undefined) =>
  (sources ?? []).flatMap((source) =>
    Object.values(source.secret_env_overlay ?? {}).filter((name): name is string => name !== null)
  )
const mcpSecrets = (servers: Readonly<Record<string, McpServer>> | undefined) =>
  Object.values(servers ?? {}).flatMap((server) => server.auth === undefined ? [] : [server.auth.secret])

export const referencesOf = (definition: AgentConfigDefinition): References => {
  const subagents = Object.values(definition.subagents ?? {})
  const machineSources = [...(definition.machine_sources ?? []), ...subagents.flatMap((sub) => sub.machine_sources ?? [])]
  return {
    models: distinct([definition.model, ...subagents.flatMap((sub) => sub.model === undefined ? [] : [sub.model])], modelKey),
    secretNames: Array.from(
      new Set([
        ...machineSecrets(definition.machine_sources),
        ...mcpSecrets(definition.mcp),
        ...(definition.event_webhook?.signing_secret === undefined ? [] : [definition.event_webhook.signing_secret]),
        ...(definition.git_credentials === undefined ? [] : [definition.git_credentials.token_secret]),
        ...subagents.flatMap((sub) => [...machineSecrets(sub.machine_sources), ...mcpSecrets(sub.mcp)])
      ])
    ),
    skills: distinct([...(definition.skills ?? []), ...subagents.flatMap((sub) => sub.skills ?? [])], skillKey),
    agentConfigIds: subagents.flatMap((sub) => sub.agent_config_id === undefined ? [] : [sub.agent_config_id]),
    machineIds: Array.from(new Set(machineSources.flatMap((source) => source.machine_id === undefined ? [] : [source.machine_id]))),
    machinePoolIds: Array.from(
      new Set(machineSources.flatMap((source) => source.machine_pool_id === undefined ? [] : [source.machine_pool_id]))
    )
  }
}
