/** The `skill_grants` table. */
import { Effect } from "effect"
import { SkillGrant } from "../../domain/configuration/Skills.ts"
import { SkillGrantId, SkillId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "./GrantsRepository.ts"

export class SkillGrantsRepository extends Effect.Service<SkillGrantsRepository>()("SkillGrantsRepository", {
  effect: grantsRepository({
    table: "skill_grants",
    resourceColumn: "skill_id",
    resourceId: SkillId,
    grantId: SkillGrantId,
    grant: SkillGrant,
    label: "Skill"
  })
}) {}
