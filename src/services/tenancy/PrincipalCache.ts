/**
 * The principals of recent requests (ApiKeys.authenticate), kept while nothing they were read
 * from changes: on the embedded database only. There this process is the database's one client,
 * and the database tells it of every committed change to the tables a principal is read from
 * (`api_keys`, `org_members`, `projects`, `project_members`: a trigger's notice on
 * ACCESS_CHANGES_CHANNEL, read by PgliteConnection) before the change's own writer hears that it
 * committed. Every kept principal is then forgotten, so a revoked key or a removed member is
 * refused by the next request, as without the cache (docs/access.md). On Postgres other
 * processes write too, and their notices would arrive late: nothing is kept.
 */
import { Context, Effect, Option } from "effect"
import type { Principal } from "../../domain/tenancy/Principal.ts"

/** The channel of the notices of changes to the tables a principal is read from (migration 0017). */
export const ACCESS_CHANGES_CHANNEL = "access_changes"

/** The most principals kept; past it, the one kept longest is forgotten first. */
const MAX_KEPT = 10_000

export class PrincipalCache extends Context.Service<PrincipalCache, {
  /**
   * The principal `key` names: the one kept, or what `read` finds, kept when it found one and
   * nothing changed while it read.
   */
  readonly through: <E>(
    key: string,
    read: Effect.Effect<Option.Option<Principal>, E>
  ) => Effect.Effect<Option.Option<Principal>, E>
}>()("PrincipalCache") {
  /** Nothing kept: every request reads its key. */
  static readonly none = PrincipalCache.of({ through: (_key, read) => read })

  /** A cache, and `forgetAll`, to call on every notice of a change. */
  static readonly keeping = () => {
    const kept = new Map<string, Principal>()
    // Counts the notices: a read that a notice overtook may have seen the rows before the change.
    let changes = 0
    const keep = (key: string, principal: Principal) => {
      if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!)
      kept.set(key, principal)
    }
    const cache = PrincipalCache.of({
      through: (key, read) =>
        Effect.suspend(() => {
          const principal = kept.get(key)
          if (principal !== undefined) return Effect.succeed(Option.some(principal))
          const changesBefore = changes
          return Effect.map(read, (found) => {
            if (Option.isSome(found) && changes === changesBefore) keep(key, found.value)
            return found
          })
        })
    })
    const forgetAll = () => {
      changes++
      kept.clear()
    }
    return { cache, forgetAll } as const
  }
}
