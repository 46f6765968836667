/**
 * Who may see and do what (docs/access.md).
 *
 * A resource outside the caller's organizations is `not_found`; `forbidden` is for a caller
 * who can see it but whose role may not act. The caller's standing in the organization and
 * project of its request's path was read with its key (ApiKeys.authenticate); other
 * organizations and projects, and callers without it (a stream's re-check), are read here.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { ORG_ROLE_RANK, type OrgRole } from "../../domain/tenancy/Members.ts"
import { CurrentPrincipal, type PathStanding, type Principal } from "../../domain/tenancy/Principal.ts"
import { someOrFail } from "../shared/Failures.ts"
import { MembersRepository } from "./MembersRepository.ts"
import { ProjectsRepository } from "./ProjectsRepository.ts"

export const orgNotFound = (orgId: OrgId) => new NotFound({ error: `Organization ${orgId} not found` })
export const projectNotFound = (projectId: ProjectId) => new NotFound({ error: `Project ${projectId} not found` })
export const notAnOrgMember = (orgId: OrgId, userId: UserId) =>
  new NotFound({ error: `User ${userId} is not a member of organization ${orgId}` })

/**
 * Which of a user's organization roles a check reads: the one read with the caller's key when it
 * was (`authenticated`: the request's path named the organization), or the one stored now
 * (`current`), for a check that must still hold when its transaction commits, made once that
 * transaction holds the lock that changes to the role take (Members). An organization key's role
 * is the key's own either way.
 */
export type RoleRead = "authenticated" | "current"

/** What a caller may do in a project, weakest first. */
export type ProjectAccess = "read" | "write" | "admin"
const PROJECT_ACCESS_RANK: Record<ProjectAccess, number> = { read: 0, write: 1, admin: 2 }

/**
 * The caller's standing read with its key (Principal's `standing`) when it is about this
 * organization (and this project, when one is asked about); else undefined, and it is read.
 */
const standingIn = (principal: Principal, orgId: OrgId, projectId?: ProjectId): PathStanding | undefined => {
  const standing = principal.standing
  if (standing === undefined || standing.orgId !== orgId) return undefined
  if (projectId !== undefined && standing.projectId !== projectId) return undefined
  return standing
}

const make = Effect.gen(function*() {
  const members = yield* MembersRepository
  const projects = yield* ProjectsRepository

  /** The caller's role in an organization it belongs to, read as `read` says. */
  const orgRole = (orgId: OrgId, read: RoleRead = "authenticated") =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      if (principal.kind === "organization") {
        return principal.orgId === orgId ? Option.some<OrgRole>(principal.role) : Option.none<OrgRole>()
      }
      const known = read === "authenticated" ? standingIn(principal, orgId) : undefined
      if (known !== undefined) return Option.fromNullishOr(known.role)
      return Option.map(yield* members.find(orgId, principal.userId), (membership) => membership.role)
    }).pipe(someOrFail(() => orgNotFound(orgId)))

  /** The caller's role in the organization, read as `read` says, at least `minimum`. */
  const requireOrgRole = (orgId: OrgId, minimum: OrgRole, read: RoleRead = "authenticated") =>
    Effect.flatMap(orgRole(orgId, read), (role) =>
      ORG_ROLE_RANK[role] >= ORG_ROLE_RANK[minimum]
        ? Effect.succeed(role)
        : Effect.fail(
          new Forbidden({ error: `This needs the ${minimum} role in organization ${orgId}; the caller is ${role}` })
        ))

  /** The calling user; organization API keys act for an organization, not a user. */
  const requireUser = Effect.flatMap(CurrentPrincipal, (principal) =>
    principal.kind === "user"
      ? Effect.succeed(principal.userId)
      : Effect.fail(
        new Forbidden({ error: "An organization API key does not act as a user; use a personal API key" })
      ))

  /** The calling user, or null for an organization API key. */
  const callerUserId = Effect.map(
    CurrentPrincipal,
    (principal): UserId | null => principal.kind === "user" ? principal.userId : null
  )

  /**
   * What the caller may do in a project of an organization it belongs to. A user's membership,
   * the project and the user's project role are one read.
   */
  const projectAccess = (orgId: OrgId, projectId: ProjectId): Effect.Effect<ProjectAccess, NotFound, CurrentPrincipal> =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      const known = standingIn(principal, orgId, projectId)
      if (principal.kind === "organization") {
        const role = yield* orgRole(orgId)
        const projectFound = known !== undefined
          ? known.projectFound
          : Option.isSome(yield* projects.findInOrg(orgId, projectId))
        if (!projectFound) return yield* projectNotFound(projectId)
        return role === "member" ? "write" : "admin"
      }
      const found = known !== undefined
        ? known.role === null
          ? Option.none()
          : Option.some({ role: known.role, project_found: known.projectFound, project_role: known.projectRole })
        : yield* members.standing(orgId, principal.userId, projectId)
      if (Option.isNone(found)) return yield* orgNotFound(orgId)
      const { project_found, project_role, role } = found.value
      if (!project_found) return yield* projectNotFound(projectId)
      if (role !== "member") return "admin"
      return project_role === null ? "read" : project_role === "admin" ? "admin" : "write"
    })

  /** The caller's access to the project, at least `minimum`. */
  const requireProjectAccess = (orgId: OrgId, projectId: ProjectId, minimum: ProjectAccess) =>
    Effect.flatMap(projectAccess(orgId, projectId), (access): Effect.Effect<ProjectAccess, Forbidden> =>
      PROJECT_ACCESS_RANK[access] >= PROJECT_ACCESS_RANK[minimum]
        ? Effect.succeed(access)
        : Effect.fail(
          new Forbidden({ error: `This needs ${minimum} access to project ${projectId}; the caller has ${access}` })
        ))

  return { orgRole, requireOrgRole, requireUser, callerUserId, projectAccess, requireProjectAccess } as const
})

export class Access extends Context.Service<Access, Effect.Success<typeof make>>()("Access") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MembersRepository.layer,
      ProjectsRepository.layer
    ])
  )
}
