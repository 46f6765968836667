/**
 * Who may see and do what (docs/access.md).
 *
 * A resource outside the caller's organizations is `not_found`; `forbidden` is for a caller
 * who can see it but whose role may not act.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { ORG_ROLE_RANK, type OrgRole } from "../../domain/tenancy/Organizations.ts"
import { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"

/** What a caller may do in a project, weakest first. */
export type ProjectAccess = "read" | "write" | "admin"
const PROJECT_ACCESS_RANK: Record<ProjectAccess, number> = { read: 0, write: 1, admin: 2 }

export class Access extends Effect.Service<Access>()("Access", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const roleIn = (orgId: OrgId) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        if (principal.kind === "organization") {
          return principal.orgId === orgId ? Option.some<OrgRole>(principal.role) : Option.none()
        }
        const rows = yield* sql<{ role: OrgRole }>`
          SELECT role FROM org_members WHERE org_id = ${orgId} AND user_id = ${principal.userId}`
        return Option.fromNullable(rows[0]?.role)
      }).pipe(Effect.orDie)

    /** The caller's role in an organization it belongs to. */
    const orgRole = (orgId: OrgId) =>
      Effect.flatMap(roleIn(orgId), Option.match({
        onNone: () => Effect.fail(new NotFound({ error: `Organization ${orgId} not found` })),
        onSome: Effect.succeed
      }))

    /** The caller's role in the organization, at least `minimum`. */
    const requireOrgRole = (orgId: OrgId, minimum: OrgRole) =>
      Effect.flatMap(orgRole(orgId), (role) =>
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

    /** What the caller may do in a project of an organization it belongs to. */
    const projectAccess = (orgId: OrgId, projectId: ProjectId) =>
      Effect.gen(function*() {
        const role = yield* orgRole(orgId)
        const principal = yield* CurrentPrincipal
        const userId: UserId | null = principal.kind === "user" ? principal.userId : null
        const rows = yield* sql<{ member_role: "admin" | "member" | null }>`
          SELECT pm.role AS member_role
          FROM projects p
          LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = ${userId}
          WHERE p.id = ${projectId} AND p.org_id = ${orgId}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* Effect.fail(new NotFound({ error: `Project ${projectId} not found` }))
        const access: ProjectAccess = role !== "member"
          ? "admin"
          : principal.kind === "organization"
          ? "write"
          : rows[0].member_role === "admin"
          ? "admin"
          : rows[0].member_role === "member"
          ? "write"
          : "read"
        return access
      })

    /** The caller's access to the project, at least `minimum`. */
    const requireProjectAccess = (orgId: OrgId, projectId: ProjectId, minimum: ProjectAccess) =>
      Effect.flatMap(projectAccess(orgId, projectId), (access): Effect.Effect<ProjectAccess, Forbidden> =>
        PROJECT_ACCESS_RANK[access] >= PROJECT_ACCESS_RANK[minimum]
          ? Effect.succeed(access)
          : Effect.fail(
            new Forbidden({ error: `This needs ${minimum} access to project ${projectId}; the caller has ${access}` })
          ))

    return { orgRole, requireOrgRole, requireUser, projectAccess, requireProjectAccess } as const
  })
}) {}
