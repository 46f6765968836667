/**
 * Skills, their immutable versions and project grants (docs/skills.md).
 *
 * Visibility: every member of the organization sees the skills owned by its projects; a personal
 * skill is seen by its owner only. Changing a project's skill (new version, grants, deletion)
 * needs write access to the owning project; a personal skill, being its owner.
 */
import { Context, Effect, Layer, Option } from "effect"
import {
  type Skill,
  SKILL_CONTENT_MAX_BYTES,
  type SkillContent,
  skillContentBytes,
  skillContentProblems
} from "../../domain/configuration/Skills.ts"
import { Conflict, InvalidRequest, NotFound, RequestTooLarge } from "../../domain/shared/Errors.ts"
import { type OrgId, type ProjectId, SkillId, type UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged, pagedBy, versionKey } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { Grants } from "./Grants.ts"
import { SkillGrantsRepository } from "./SkillGrantsRepository.ts"
import { SkillsRepository } from "./SkillsRepository.ts"

/** How a skill is usable by a project, strongest first: its own, the caller's personal one, granted. */
export type SkillUse = "owned" | "personal" | "granted"
const USE_RANK: Record<SkillUse, number> = { owned: 0, personal: 1, granted: 2 }

export interface UsableSkill {
  readonly id: SkillId
  readonly name: string
  readonly latestVersion: number
  readonly use: SkillUse
}

export interface NewSkill {
  readonly name: string
  readonly description: string
  readonly owner_project_id?: ProjectId | undefined
  readonly owner?: "personal" | undefined
  readonly content: SkillContent
}

/** Problems of a body's `content` as `invalid_request`, oversized content as `request_too_large`; the size when it fits. */
const checkContent = (content: SkillContent) => {
  const problems = skillContentProblems(content, "/content")
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

const make = Effect.gen(function*() {
  const skills = yield* SkillsRepository
  const skillGrants = yield* SkillGrantsRepository
  const grants = yield* Grants
  const access = yield* Access
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions

  const notFound = (skillId: SkillId) => () => new NotFound({ error: `Skill ${skillId} not found` })

  /** A skill of the organization the caller can see. */
  const visible = (orgId: OrgId, skillId: SkillId) =>
    Effect.gen(function*() {
      yield* access.orgRole(orgId)
      const userId = yield* access.callerUserId
      return yield* skills.findVisible(orgId, skillId, userId).pipe(someOrFail(notFound(skillId)))
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

  const create = (orgId: OrgId, input: NewSkill) =>
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
      const size = yield* checkContent(input.content)
      const owner = ownerUserId === null ? `project ${input.owner_project_id}` : "you"
      const skill = {
        id: yield* ids.make(SkillId),
        org_id: orgId,
        owner_project_id: input.owner_project_id ?? null,
        owner_user_id: ownerUserId,
        name: input.name,
        description: input.description
      }
      return yield* transaction(skills.insert(skill, input.content, size)).pipe(
        replaceFailure(
          "UniqueViolation",
          () => new Conflict({ error: `A skill named "${input.name}" belongs to ${owner} already; pick another name` }),
          "Debug"
        )
      )
    })

  const list = (orgId: OrgId, query: ListQuery) =>
    Effect.gen(function*() {
      yield* access.orgRole(orgId)
      const userId = yield* access.callerUserId
      return yield* paged(
        listOf("skills", orgId, userId),
        query,
        (keyset) => skills.page(orgId, userId, keyset),
        (skill) => skill.id
      )
    })

  const get = (orgId: OrgId, skillId: SkillId) => visible(orgId, skillId)

  /**
   * Deletes the skill with its versions and grants; agent configs keep the ids they compiled. Of
   * deletions of one skill at once, one deletes it and the others are `not_found`.
   */
  const remove = (orgId: OrgId, skillId: SkillId) =>
    Effect.gen(function*() {
      yield* changeable(orgId, skillId)
      if (!(yield* skills.remove(skillId))) return yield* Effect.fail(notFound(skillId)())
    })

  const createVersion = (orgId: OrgId, skillId: SkillId, content: SkillContent) =>
    Effect.gen(function*() {
      yield* changeable(orgId, skillId)
      const size = yield* checkContent(content)
      return yield* transaction(skills.insertNextVersion(skillId, content, size)).pipe(someOrFail(notFound(skillId)))
    })

  const listVersions = (orgId: OrgId, skillId: SkillId, query: ListQuery) =>
    Effect.andThen(
      visible(orgId, skillId),
      pagedBy(
        versionKey,
        listOf("skill versions", skillId),
        query,
        (keyset) => skills.versions(skillId, keyset),
        (version) => version.version
      )
    )

  const getVersion = (orgId: OrgId, skillId: SkillId, version: number) =>
    Effect.andThen(
      visible(orgId, skillId),
      skills.findVersion(skillId, version).pipe(
        someOrFail(() => new NotFound({ error: `Skill ${skillId} has no version ${version}` }))
      )
    )

  const { createGrant, listGrants, removeGrant } = grants.operations(skillGrants, {
    grantable: changeable,
    visible,
    ownerProjectOf: (skill) => skill.owner_project_id
  })

  /** Which of `candidates` `projectId` may use, and how, strongest use first. */
  const usableAmong = (projectId: ProjectId, userId: UserId | null, candidates: ReadonlyArray<Skill>) =>
    Effect.map(skillGrants.grantedAmong(projectId, candidates.map((skill) => skill.id)), (granted) =>
      candidates
        .flatMap((skill): ReadonlyArray<UsableSkill> => {
          const usable = skill.owner_project_id === projectId ||
            (skill.owner_user_id !== null && skill.owner_user_id === userId) || granted.has(skill.id)
          if (!usable) return []
          const use: SkillUse = skill.owner_project_id === projectId
            ? "owned"
            : skill.owner_user_id !== null
            ? "personal"
            : "granted"
          return [{ id: skill.id, name: skill.name, latestVersion: skill.latest_version, use }]
        })
        .sort((a, b) => USE_RANK[a.use] - USE_RANK[b.use] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))

  /**
   * The skills named `name` that `projectId` may use, strongest use first: owned by the
   * project, personal to `userId`, granted to the project.
   */
  const usableByName = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, name: string) =>
    Effect.flatMap(skills.named(orgId, name), (candidates) => usableAmong(projectId, userId, candidates))

  /** The skill `skillId` when `projectId` may use it. */
  const usableById = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, skillId: string) =>
    Effect.map(
      Effect.flatMap(skills.withId(orgId, skillId), (candidates) => usableAmong(projectId, userId, candidates)),
      (usable) => Option.fromNullishOr(usable[0])
    )

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

export class Skills extends Context.Service<Skills, Effect.Success<typeof make>>()("Skills") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      SkillsRepository.layer,
      SkillGrantsRepository.layer,
      Grants.layer,
      Access.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
