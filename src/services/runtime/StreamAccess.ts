/**
 * The access of a long-lived reader, checked again while it reads (docs/agents-api.md,
 * "Timeline"): the API key that opened an event stream must still exist, and whom it acts for
 * must still reach the agent (`AgentAccess.read`: organization membership, the project, the
 * agent). A stream ends within ACCESS_RECHECK_INTERVAL of losing either.
 */
import { Duration, Effect, Either, Option } from "effect"
import type { AgentId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { CurrentPrincipal, type Principal } from "../../domain/tenancy/Principal.ts"
import { ApiKeys } from "../tenancy/ApiKeys.ts"
import { AgentAccess } from "./AgentAccess.ts"

/** How often an open stream checks its caller's access again. */
export const ACCESS_RECHECK_INTERVAL = Duration.seconds(2)

/** Why a stream ended: its key is gone, its caller no longer reaches the agent, or the check itself failed. */
export interface AccessLost {
  readonly reason: "api_key_revoked" | "access_revoked" | "access_check_failed"
  readonly message: string
}

export class StreamAccess extends Effect.Service<StreamAccess>()("StreamAccess", {
  effect: Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    const agentAccess = yield* AgentAccess

    /** What the caller lost since the stream opened, if anything. */
    const check = (principal: Principal, orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
      Effect.gen(function*() {
        const current = yield* apiKeys.principalOfKey(principal.keyId)
        if (Option.isNone(current)) {
          return Option.some<AccessLost>({
            reason: "api_key_revoked",
            message: `The API key ${principal.keyId} that opened this stream was deleted`
          })
        }
        const reached = yield* Effect.either(
          Effect.provideService(agentAccess.read(orgId, projectId, agentId), CurrentPrincipal, current.value)
        )
        return Either.isLeft(reached)
          ? Option.some<AccessLost>({ reason: "access_revoked", message: reached.left.error })
          : Option.none<AccessLost>()
      }).pipe(
        // Fail closed: a stream whose access cannot be checked ends; the client reconnects.
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning("an event stream's access check failed", cause),
            Option.some<AccessLost>({ reason: "access_check_failed", message: "The stream's access could not be checked" })
          )
        )
      )

    /**
     * Waits (checking every ACCESS_RECHECK_INTERVAL) until the calling principal no longer reaches
     * the agent; what it lost.
     */
    const lost = (orgId: OrgId, projectId: ProjectId, agentId: AgentId): Effect.Effect<AccessLost, never, CurrentPrincipal> =>
      Effect.flatMap(CurrentPrincipal, (principal) =>
        Effect.sleep(ACCESS_RECHECK_INTERVAL).pipe(
          Effect.zipRight(check(principal, orgId, projectId, agentId)),
          Effect.repeat({ until: Option.isSome }),
          Effect.map(Option.getOrThrow)
        ))

    return { lost } as const
  }),
  dependencies: [ApiKeys.Default, AgentAccess.Default]
}) {}
