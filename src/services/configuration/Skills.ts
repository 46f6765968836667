/**
 * Skills, their immutable versions and project grants (docs/skills.md).
 *
 * Visibility: every member of the organization sees the skills owned by its projects; a personal
 * skill is seen by its owner only. Changing a project's skill (new version, grants, deletion)
 * needs write access to the owning project; a personal skill, being its owner.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option } from "effect"
import { Conflict, InvalidRequest, NotFound, RequestTooLarge } from "../../domain/shared/Errors.ts"
import { type OrgId, type ProjectId, SkillGrantId, SkillId, type UserId } from "../../domain/shared/Ids.ts"
import { type ListQuery, toPage } from "../../domain/shared/Pagination.ts"
import { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import {
  Skill,
  SKILL_CONTENT_MAX_BYTES,
  type SkillContent,
  skillContentBytes,
  skillContentProblems,
  SkillGrant,
  SkillVersion
} from "../../domain/configuration/Skills.ts"
import { Access } from "../tenancy/Access.ts"
import { grantStore } from "./Grants.ts"
import { MemberRemovalGuards } from "../tenancy/MemberRemovalGuards.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr, onDuplicate } from "../shared/Sql.ts"

interface SkillRow {
  readonly id: SkillId
  readonly org_id: OrgId
  readonly name: string
  readonly description: string
  readonly owner_project_id: ProjectId | null
  readonly owner_user_id: UserId | null
  readonly latest_version: number
  readonly created_at: Date
}

interface SkillVersionRow {
  readonly skill_id: SkillId
  readonly version: number
  readonly content: SkillContent
  readonly size_bytes: number
  readonly created_at: Date
}

interface SkillGrantRow {
  readonly id: SkillGrantId
  readonly org_id: OrgId
  readonly skill_id: SkillId
  readonly target_project_id: ProjectId
  readonly created_at: Date
}

/** How a skill is usable by a project, strongest first: its own, the caller's personal one, granted. */
export type SkillUse = "owned" | "personal" | "granted"

export interface UsableSkill {
  readonly id: SkillId
  readonly name: string
  readonly latestVersion: number
  readonly use: SkillUse
}

const toSkill = (row: SkillRow) => new Skill(row, { disableValidation: true })
const toVersion = (row: SkillVersionRow) => new SkillVersion(row, { disableValidation: true })
const toGrant = (row: SkillGrantRow) => new SkillGrant(row, { disableValidation: true })

const skillNotFound = (skillId: SkillId) => () => new NotFound({ error: `Skill ${skillId} not found` })

/** Versions page by number; the cursor stands for the last version returned. */
const versionKey = (version: SkillVersion) => `v${version.version}`
const afterVersion = (cursor: string | undefined): Effect.Effect<number, InvalidRequest> => {
  if (cursor === undefined) return Effect.succeed(0)
  const match = /^v([0-9]{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"))
  return match === null
    ? Effect.fail(
      new InvalidRequest({
        error: "The cursor is not one this server returned; pass next_cursor from the previous page",
        issues: [{ path: "/cursor", message: "unknown cursor" }]
      })
    )
    : Effect.succeed(Number(match[1]))
}

/** Content problems as `invalid_request`, oversized content as `request_too_large`. */
const checkContent = (content: SkillContent, pointer: string) => {
  const problems = skillContentProblems(content, pointer)
  if (problems.length > 0) {
    return Effect.fail(
      new InvalidRequest({
        error: "The skill content is invalid: " + problems.map((p) => `${p.path}: ${p.message}`).join("; "),
        issues: problems
      })
    )
  }
  const size = skillContentBytes(content)
  return size > SKILL_CONTENT_MAX_BYTES
    ? Effect.fail(
      new RequestTooLarge({
        error: `The skill content is ${size} bytes (SKILL.md, file paths and texts in UTF-8); ` +
          `a version holds at most ${SKILL_CONTENT_MAX_BYTES}`
      })
    )
    : Effect.succeed(size)
}

export class Skills extends Effect.Service<Skills>()("Skills", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const grants = grantStore(sql, {
      table: "skill_grants",
      resourceColumn: "skill_id",
      resourceLabel: "Skill",
      newId: SkillGrantId.make,
      toGrant
    })
    const access = yield* Access
    const guards = yield* MemberRemovalGuards

    // Spec 4.1: a member stays while an agent's configuration uses one of their personal skills
    // (compiled configs name skills by `skill_id`, at the top level or in inline subagents).
    yield* guards.register((orgId, userId) =>
      sql<{ id: SkillId; name: string; agent_id: string }>`
        SELECT DISTINCT ON (s.id) s.id, s.name, a.id AS agent_id
        FROM skills s
        JOIN agent_configs c ON c.org_id = s.org_id
          AND jsonb_path_exists(c.compiled_definition, '$.**.skill_id ? (@ == $id)', jsonb_build_object('id', s.id))
        JOIN agents a ON a.agent_config_id = c.id
        WHERE s.org_id = ${orgId} AND s.owner_user_id = ${userId}
        ORDER BY s.id, a.id`.pipe(
        Effect.orDie,
        Effect.map((rows) =>
          rows.map((row) =>
            `personal skill "${row.name}" (${row.id}) is used by the configuration of agent ${row.agent_id}; ` +
            "give that agent a config without it first"
          )
        )
      )
    )

    const callerUserId = Effect.map(CurrentPrincipal, (p): UserId | null => p.kind === "user" ? p.userId : null)

    /** A skill of the organization the caller can see. */
    const visible = (orgId: OrgId, skillId: SkillId) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const userId = yield* callerUserId
        const rows = yield* sql<SkillRow>`
          SELECT * FROM skills
          WHERE id = ${skillId} AND org_id = ${orgId}
            AND (owner_project_id IS NOT NULL OR owner_user_id = ${userId})`.pipe(Effect.orDie)
        return yield* firstOr(skillNotFound(skillId))(rows)
      })

    /** A skill the caller can see and change. */
    const changeable = (orgId: OrgId, skillId: SkillId) =>
      Effect.gen(function*() {
        const skill = yield* visible(orgId, skillId)
        if (skill.owner_project_id !== null) {
          yield* access.requireProjectAccess(orgId, skill.owner_project_id, "write")
        }
        return skill
      })

    const create = (
      orgId: OrgId,
      input: {
        readonly name: string
        readonly description: string
        readonly owner_project_id?: ProjectId | undefined
        readonly owner?: "personal" | undefined
        readonly content: SkillContent
      }
    ) =>
      Effect.gen(function*() {
        if ((input.owner_project_id === undefined) === (input.owner === undefined)) {
          return yield* Effect.fail(
            new InvalidRequest({
              error: "Give exactly one of owner_project_id (a project's skill) or owner: \"personal\" (yours)",
              issues: [{ path: "/owner_project_id", message: "exactly one of owner_project_id or owner is required" }]
            })
          )
        }
        let ownerUserId: UserId | null = null
        if (input.owner_project_id !== undefined) {
          yield* access.requireProjectAccess(orgId, input.owner_project_id, "write")
        } else {
          yield* access.orgRole(orgId)
          ownerUserId = yield* access.requireUser
        }
        const size = yield* checkContent(input.content, "/content")
        const skillId = SkillId.make()
        const owner = ownerUserId === null ? `project ${input.owner_project_id}` : "you"
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<SkillRow>`
            INSERT INTO skills ${
            sql.insert({
              id: skillId,
              org_id: orgId,
              owner_project_id: input.owner_project_id ?? null,
              owner_user_id: ownerUserId,
              name: input.name,
              description: input.description,
              latest_version: 1
            })
          } RETURNING *`
          yield* sql`
            INSERT INTO skill_versions ${
            sql.insert({ skill_id: skillId, version: 1, content: JSON.stringify(input.content), size_bytes: size })
          }`
          return rows[0]
        })).pipe(
          onDuplicate(() =>
            new Conflict({ error: `A skill named "${input.name}" belongs to ${owner} already; pick another name` })
          )
        )
        return toSkill(row)
      })

    const list = (orgId: OrgId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const userId = yield* callerUserId
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<SkillRow>`
          SELECT * FROM skills
          WHERE org_id = ${orgId} AND (owner_project_id IS NOT NULL OR owner_user_id = ${userId})
            ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toSkill), limit, (skill) => skill.id)
      })

    const get = (orgId: OrgId, skillId: SkillId) => Effect.map(visible(orgId, skillId), toSkill)

    /** Deletes the skill with its versions and grants; agent configs keep the ids they compiled. */
    const remove = (orgId: OrgId, skillId: SkillId) =>
      Effect.gen(function*() {
        yield* changeable(orgId, skillId)
        yield* sql`DELETE FROM skills WHERE id = ${skillId}`.pipe(Effect.orDie)
      })

    const createVersion = (orgId: OrgId, skillId: SkillId, content: SkillContent) =>
      Effect.gen(function*() {
        yield* changeable(orgId, skillId)
        const size = yield* checkContent(content, "/content")
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const locked = yield* sql<{ latest_version: number }>`
            UPDATE skills SET latest_version = latest_version + 1 WHERE id = ${skillId}
            RETURNING latest_version`
          const version = yield* firstOr(skillNotFound(skillId))(locked)
          const rows = yield* sql<SkillVersionRow>`
            INSERT INTO skill_versions ${
            sql.insert({ skill_id: skillId, version: version.latest_version, content: JSON.stringify(content), size_bytes: size })
          } RETURNING *`
          return rows[0]
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        return toVersion(row)
      })

    const listVersions = (orgId: OrgId, skillId: SkillId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* visible(orgId, skillId)
        const { limit } = yield* pageRequest({ limit: query.limit })
        const after = yield* afterVersion(query.cursor)
        const rows = yield* sql<SkillVersionRow>`
          SELECT * FROM skill_versions WHERE skill_id = ${skillId} AND version > ${after}
          ORDER BY version LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toVersion), limit, versionKey)
      })

    const getVersion = (orgId: OrgId, skillId: SkillId, version: number) =>
      Effect.gen(function*() {
        yield* visible(orgId, skillId)
        const rows = yield* sql<SkillVersionRow>`
          SELECT * FROM skill_versions WHERE skill_id = ${skillId} AND version = ${version}`.pipe(Effect.orDie)
        const row = yield* firstOr(() => new NotFound({ error: `Skill ${skillId} has no version ${version}` }))(rows)
        return toVersion(row)
      })

    const createGrant = (orgId: OrgId, skillId: SkillId, targetProjectId: ProjectId) =>
      Effect.gen(function*() {
        const skill = yield* changeable(orgId, skillId)
        if (skill.owner_project_id === targetProjectId) {
          return yield* Effect.fail(
            new Conflict({ error: `Project ${targetProjectId} owns skill ${skillId}; it needs no grant` })
          )
        }
        return yield* grants.create(orgId, skillId, targetProjectId)
      })

    const listGrants = (orgId: OrgId, skillId: SkillId, query: ListQuery) =>
      Effect.zipRight(visible(orgId, skillId), grants.list(skillId, query))

    const removeGrant = (orgId: OrgId, skillId: SkillId, grantId: SkillGrantId) =>
      Effect.zipRight(changeable(orgId, skillId), grants.remove(skillId, grantId))

    /** Skills of the organization `projectId` may use, with how; `only` narrows by name or id. */
    const usable = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, only: Statement.Fragment) =>
      sql<{ id: SkillId; name: string; latest_version: number; use: SkillUse }>`
        SELECT s.id, s.name, s.latest_version,
          CASE WHEN s.owner_project_id = ${projectId} THEN 'owned'
               WHEN s.owner_user_id IS NOT NULL THEN 'personal'
               ELSE 'granted' END AS use
        FROM skills s
        WHERE s.org_id = ${orgId} AND ${only}
          AND (s.owner_project_id = ${projectId} OR s.owner_user_id = ${userId}
            OR EXISTS (SELECT 1 FROM skill_grants g WHERE g.skill_id = s.id AND g.target_project_id = ${projectId}))
        ORDER BY CASE WHEN s.owner_project_id = ${projectId} THEN 0 WHEN s.owner_user_id IS NOT NULL THEN 1 ELSE 2 END, s.id`
        .pipe(
          Effect.orDie,
          Effect.map((rows): ReadonlyArray<UsableSkill> =>
            rows.map((row) => ({ id: row.id, name: row.name, latestVersion: row.latest_version, use: row.use }))
          )
        )

    /**
     * The skills named `name` that `projectId` may use, strongest use first: owned by the
     * project, personal to `userId`, granted to the project.
     */
    const usableByName = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, name: string) =>
      usable(orgId, projectId, userId, sql`s.name = ${name}`)

    /** The skill `skillId` when `projectId` may use it. */
    const usableById = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, skillId: string) =>
      Effect.map(usable(orgId, projectId, userId, sql`s.id = ${skillId}`), (skills) => Option.fromNullable(skills[0]))

    return {
      create,
      list,
      get,
      remove,
      createVersion,
      listVersions,
      getVersion,
      createGrant,
      listGrants,
      removeGrant,
      usableByName,
      usableById
    } as const
  })
}) {}
