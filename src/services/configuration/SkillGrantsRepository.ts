/** The `skill_grants` table. */
import { Context, Effect, Layer } from "effect"
import { SkillGrant } from "../../domain/configuration/Skills.ts"
import { SkillGrantId, SkillId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "./GrantsRepository.ts"

const make = grantsRepository({
  table: "skill_grants",
  resourceColumn: "skill_id",
  resourceId: SkillId,
  grantId: SkillGrantId,
  grant: SkillGrant,
  label: "Skill"
})

export class SkillGrantsRepository extends Context.Service<SkillGrantsRepository, Effect.Success<typeof make>>()("SkillGrantsRepository") {
  static readonly layer = Layer.effect(this, make)
}
