/**
 * Checks that can block the removal of an organization member (spec 4.1: a personal skill
 * referenced by an active agent's configuration, a personal secret referenced by a model
 * provider config, machine pool or integration). Each resource that can block registers one
 * check when its service is built; `Members.remove` asks all of them.
 */
import { Effect } from "effect"
import type { OrgId, UserId } from "../../domain/shared/Ids.ts"

/** The reasons the member cannot be removed now; empty when nothing blocks. */
export type MemberRemovalCheck = (orgId: OrgId, userId: UserId) => Effect.Effect<ReadonlyArray<string>>

export class MemberRemovalGuards extends Effect.Service<MemberRemovalGuards>()("MemberRemovalGuards", {
  sync: () => {
    const checks: Array<MemberRemovalCheck> = []
    return {
      register: (check: MemberRemovalCheck) => Effect.sync(() => void checks.push(check)),
      blockers: (orgId: OrgId, userId: UserId) =>
        Effect.map(Effect.forEach(checks, (check) => check(orgId, userId)), (reasons) => reasons.flat())
    } as const
  }
}) {}
