/**
 * Resolving the names and ids an agent config's definition refers to, for the project it is made
 * in (docs/agent-configs.md, "Names"): models granted to the project, secrets it may use, skills
 * it owns, was granted or that are the caller's, other configs of the project, machines it may use
 * (the organization's granted to it, or the caller's personal ones) and machine pools granted to it.
 */
import { Context, Effect, Layer, Option } from "effect"
import {
  modelKey,
  type References,
  type Resolutions,
  skillKey,
  type SkillResolution
} from "../../domain/configuration/agent-config/References.ts"
import type { ResolvedModel } from "../../domain/configuration/Models.ts"
import type { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import { MachinePools } from "../machines/MachinePools.ts"
import { AgentConfigsRepository } from "./AgentConfigsRepository.ts"
import { Models } from "./Models.ts"
import { Secrets } from "./Secrets.ts"
import { Skills } from "./Skills.ts"

const make = Effect.gen(function*() {
  const models = yield* Models
  const secrets = yield* Secrets
  const skills = yield* Skills
  const configs = yield* AgentConfigsRepository
  const machines = yield* MachinesRepository
  const machinePools = yield* MachinePools

  const resolveSkill = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, ref: References["skills"][number]) =>
    Effect.gen(function*() {
      const candidates = ref.id !== undefined
        ? Option.toArray(yield* skills.usableById(orgId, projectId, userId, ref.id))
        : yield* skills.usableByName(orgId, projectId, userId, ref.name ?? "")
      if (candidates.length === 0) return Option.none()
      const best = candidates[0]
      const resolution: SkillResolution = best.use === "granted" && candidates.length > 1
        ? { _tag: "Ambiguous", ids: candidates.map((skill) => skill.id) }
        : { _tag: "Found", id: best.id, name: best.name, latestVersion: best.latestVersion }
      return Option.some([skillKey(ref), resolution] as const)
    })

  /** What each reference resolves to; a name absent from its map did not resolve. */
  const resolve = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, references: References) =>
    Effect.gen(function*() {
      const modelEntries = yield* Effect.forEach(references.models, (ref) =>
        Effect.map(
          models.resolveForProject(orgId, projectId, ref.provider_config, ref.name),
          Option.map((model): [string, ResolvedModel] => [modelKey(ref), model])
        ))
      const providerConfigNames = yield* Effect.filter(
        new Set(references.models.map((ref) => ref.provider_config)),
        (name) => models.providerConfigExists(orgId, name)
      )
      const secretEntries = yield* Effect.forEach(references.secretNames, (name) =>
        Effect.map(
          secrets.resolveForProject(orgId, projectId, userId, name),
          Option.map((secret) => [name, secret.id] as const)
        ))
      const skillEntries = yield* Effect.forEach(references.skills, (ref) => resolveSkill(orgId, projectId, userId, ref))
      const limits = yield* configs.limitsOf(projectId, references.agentConfigIds)
      const usableMachines = yield* machines.usableAmong(orgId, projectId, userId, references.machineIds)
      const pools = yield* machinePools.usableByProject(orgId, projectId, references.machinePoolIds)
      const resolutions: Resolutions = {
        models: new Map(modelEntries.flatMap(Option.toArray)),
        providerConfigs: new Set(providerConfigNames),
        secrets: new Map(secretEntries.flatMap(Option.toArray)),
        skills: new Map(skillEntries.flatMap(Option.toArray)),
        agentConfigs: new Map(limits.map((row) => [row.id, { maxDepth: row.max_depth, maxSubagents: row.max_subagents }])),
        machines: usableMachines,
        machinePools: pools
      }
      return resolutions
    })

  return { resolve } as const
})

export class AgentConfigNames extends Context.Service<AgentConfigNames, Effect.Success<typeof make>>()("AgentConfigNames") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      Models.layer,
      Secrets.layer,
      Skills.layer,
      AgentConfigsRepository.layer,
      MachinesRepository.layer,
      MachinePools.layer
    ])
  )
}
