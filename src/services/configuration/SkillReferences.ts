/**
 * What uses a skill: the configurations of agents. A member whose personal skill an agent's
 * configuration uses cannot be removed from the organization.
 */
import { Context, Effect, Layer } from "effect"
import type { OrgId, UserId } from "../../domain/shared/Ids.ts"
import { AgentsRepository } from "../runtime/AgentsRepository.ts"
import { AgentConfigsRepository } from "./AgentConfigsRepository.ts"
import { SkillsRepository } from "./SkillsRepository.ts"

const make = Effect.gen(function*() {
  const skills = yield* SkillsRepository
  const agentConfigs = yield* AgentConfigsRepository
  const agents = yield* AgentsRepository

  /** Why the member cannot leave the organization now: their personal skills in use; empty when none is. */
  const memberRemovalBlockers = (orgId: OrgId, userId: UserId) =>
    Effect.gen(function*() {
      const personal = yield* skills.personalOf(orgId, userId)
      return yield* Effect.forEach(personal, (skill) =>
        Effect.gen(function*() {
          const [agent] = yield* agents.runningConfigs(yield* agentConfigs.referencingSkill(orgId, skill.id))
          return agent === undefined ? [] : [
            `personal skill "${skill.name}" (${skill.id}) is used by the configuration of agent ${agent.id}; ` +
            "give that agent a config without it first"
          ]
        })).pipe(Effect.map((blockers) => blockers.flat()))
    })

  return { memberRemovalBlockers } as const
})

export class SkillReferences extends Context.Service<SkillReferences, Effect.Success<typeof make>>()("SkillReferences") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      SkillsRepository.layer,
      AgentConfigsRepository.layer,
      AgentsRepository.layer
    ])
  )
}
