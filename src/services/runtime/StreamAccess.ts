/**
 * The access of a long-lived reader, checked again while it reads (docs/agents-api.md,
 * "Timeline"): the API key that opened an event stream must still exist, and whom it acts for
 * must still reach the agent (its project's access, as `AgentAccess.read` checks it, and the agent
 * still in the project). A stream ends within ACCESS_RECHECK_INTERVAL of losing either.
 *
 * The open streams of this process are checked together, once every ACCESS_RECHECK_INTERVAL: one
 * read per API key, one read of the access per key and project, and one read of the agents per
 * key and project, however many streams each has (a check of its own per stream cost three reads
 * per stream, docs/performance-record.md). A server that is stopping ends them all at once.
 *
 * A key holds at most AGENT_PLATFORM_MAX_STREAMS_PER_KEY streams open at once in this process
 * (`admit`): one key's streams never take every connection the server can hold.
 */
import { Array, Context, Deferred, Duration, Effect, Exit, Layer, Option, Result, type Scope } from "effect"
import { RateLimited } from "../../domain/shared/Errors.ts"
import type { AgentId, ApiKeyId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { CurrentPrincipal, type Principal } from "../../domain/tenancy/Principal.ts"
import { AppConfig } from "../../layers/AppConfig.ts"
import { Access } from "../tenancy/Access.ts"
import { ApiKeys } from "../tenancy/ApiKeys.ts"
import { agentNotFound } from "./AgentAccess.ts"
import { AgentsRepository } from "./AgentsRepository.ts"

/** How often the open streams' access is checked again. */
const ACCESS_RECHECK_INTERVAL = Duration.seconds(2)

/**
 * Why a stream ended: its key is gone, its caller no longer reaches the agent, the check itself
 * failed, or the server is stopping.
 */
export interface StreamClosed {
  readonly reason: "api_key_revoked" | "access_revoked" | "access_check_failed" | "server_shutdown"
  readonly message: string
}

/** An open stream's access: who opened it on which agent, and where to say what it lost. */
interface Watch {
  readonly keyId: ApiKeyId
  readonly orgId: OrgId
  readonly projectId: ProjectId
  readonly agentId: AgentId
  readonly lost: Deferred.Deferred<StreamClosed>
}

const make = Effect.gen(function*() {
  const apiKeys = yield* ApiKeys
  const access = yield* Access
  const agents = yield* AgentsRepository
  const watches = new Set<Watch>()
  const maxStreamsPerKey = (yield* AppConfig).maxStreamsPerKey
  /** The streams each key has open in this process, from their admission until their request ends. */
  const openByKey = new Map<ApiKeyId, number>()

  /**
   * Counts a stream of the calling key as open until its request ends (the request's scope closes
   * however it ends: the stream over, the client gone, or the answer never sent); `rate_limited`
   * when the key already holds AGENT_PLATFORM_MAX_STREAMS_PER_KEY streams open here.
   */
  const admit: Effect.Effect<void, RateLimited, CurrentPrincipal | Scope.Scope> = Effect.flatMap(
    CurrentPrincipal,
    ({ keyId }) =>
      // Counted and its release registered in one step: no interruption between them.
      Effect.acquireRelease(
        Effect.suspend(() => {
          const open = openByKey.get(keyId) ?? 0
          if (Option.isSome(maxStreamsPerKey) && open >= maxStreamsPerKey.value) {
            return Effect.fail(
              new RateLimited({
                error: `The API key ${keyId} has ${open} event streams open on this server, the most one key may hold ` +
                  "at once (AGENT_PLATFORM_MAX_STREAMS_PER_KEY); close streams you no longer read before opening another"
              })
            )
          }
          openByKey.set(keyId, open + 1)
          return Effect.void
        }),
        () =>
          Effect.sync(() => {
            const open = openByKey.get(keyId)! - 1
            if (open === 0) openByKey.delete(keyId)
            else openByKey.set(keyId, open)
          })
      )
  )

  const end = (ended: ReadonlyArray<Watch>, lost: StreamClosed) => {
    for (const watch of ended) {
      watches.delete(watch)
      Deferred.doneUnsafe(watch.lost, Exit.succeed(lost))
    }
  }

  /** Fail closed: streams whose access cannot be checked end; their clients reconnect. */
  const orEnd = (group: ReadonlyArray<Watch>) => (check: Effect.Effect<void>) =>
    Effect.catchCause(check, (cause) =>
      Effect.as(
        Effect.logWarning("an event stream's access check failed", cause),
        end(group, { reason: "access_check_failed", message: "The stream's access could not be checked" })
      ))

  /** The streams one key opened in one project: the project's access, then which agents are still in it. */
  const checkProject = (principal: Principal, group: Array.NonEmptyReadonlyArray<Watch>) => {
    const { orgId, projectId } = group[0]
    return Effect.gen(function*() {
      const reached = yield* Effect.result(
        Effect.provideService(access.projectAccess(orgId, projectId), CurrentPrincipal, principal)
      )
      if (Result.isFailure(reached)) return end(group, { reason: "access_revoked", message: reached.failure.error })
      const present = yield* agents.presentInProject(projectId, group.map((watch) => watch.agentId))
      for (const watch of group) {
        if (!present.has(watch.agentId)) {
          end([watch], { reason: "access_revoked", message: agentNotFound(projectId, watch.agentId).error })
        }
      }
    }).pipe(orEnd(group))
  }

  /** The streams one key opened: the key, then each project they read. */
  const checkKey = (keyId: ApiKeyId, group: ReadonlyArray<Watch>) =>
    Effect.gen(function*() {
      const current = yield* apiKeys.principalOfKey(keyId)
      if (Option.isNone(current)) {
        return end(group, { reason: "api_key_revoked", message: `The API key ${keyId} that opened this stream was deleted` })
      }
      const byProject = Object.values(Array.groupBy(group, (watch): string => `${watch.orgId}/${watch.projectId}`))
      yield* Effect.forEach(byProject, (projectGroup) => checkProject(current.value, projectGroup), { discard: true })
    }).pipe(orEnd(group))

  const checkAll = Effect.suspend(() => {
    const byKey = Array.groupBy([...watches], (watch) => watch.keyId)
    return Effect.forEach(Object.values(byKey), (group) => checkKey(group[0].keyId, group), { discard: true })
  })
  yield* Effect.sleep(ACCESS_RECHECK_INTERVAL).pipe(Effect.andThen(checkAll), Effect.forever, Effect.forkScoped)

  /** Set when the server starts stopping: a stream that begins later ends at once. */
  let stopping: StreamClosed | undefined

  /** Waits until the stream must end (the calling principal no longer reaches the agent, or the server stops); why. */
  const lost = (orgId: OrgId, projectId: ProjectId, agentId: AgentId): Effect.Effect<StreamClosed, never, CurrentPrincipal> =>
    Effect.flatMap(CurrentPrincipal, ({ keyId }) => {
      // A stream whose answer began just before the stop, and whose body starts after it.
      if (stopping !== undefined) return Effect.succeed(stopping)
      const watch: Watch = { keyId, orgId, projectId, agentId, lost: Deferred.makeUnsafe<StreamClosed>() }
      return Effect.acquireUseRelease(
        Effect.sync(() => watches.add(watch)),
        () => Deferred.await(watch.lost),
        () => Effect.sync(() => watches.delete(watch))
      )
    })

  /** Ends every stream of this process (it is stopping); their clients reconnect, to its next start or another process. */
  const closeAtShutdown = Effect.sync(() => {
    stopping = {
      reason: "server_shutdown",
      message: "The server is stopping; reconnect with the Last-Event-ID of the last event received"
    }
    end([...watches], stopping)
  })

  return { admit, lost, closeAtShutdown } as const
})

export class StreamAccess extends Context.Service<StreamAccess, Effect.Success<typeof make>>()("StreamAccess") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ApiKeys.layer,
      Access.layer,
      AgentsRepository.layer
    ])
  )
}
