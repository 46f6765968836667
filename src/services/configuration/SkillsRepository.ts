/** The `skills` table and its `skill_versions`: a skill's versions are numbered from 1 and never change. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { Skill, SKILL_MAIN_FILE, SkillContent, SkillVersion } from "../../domain/configuration/Skills.ts"
import { OrgId, ProjectId, SkillId, UserId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery, keysetQueryBy } from "../shared/Paging.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"
import { uniqueOrDie } from "../shared/Sql.ts"

const NewSkill = Schema.Struct({
  id: SkillId,
  org_id: OrgId,
  owner_project_id: Schema.NullOr(ProjectId),
  owner_user_id: Schema.NullOr(UserId),
  name: Schema.String,
  description: Schema.String
})
const NewVersion = Schema.Struct({ skill_id: SkillId, version: Schema.Int, content: SkillContent, size_bytes: Schema.Int })
const VersionRef = Schema.Struct({ skill_id: SkillId, version: Schema.Int })
type VersionRef = typeof VersionRef.Type

/** A version's main file (`SKILL.md`), without the version's other files. */
const SkillMainText = Schema.Struct({ ...VersionRef.fields, text: Schema.String })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements

  /** Skills owned by a project, and the personal skills of `userId`. */
  const visibleTo = (userId: string | null) => sql`(owner_project_id IS NOT NULL OR owner_user_id = ${userId})`

  const insertSkill = SqlSchema.findOne({
    Request: NewSkill,
    Result: Skill,
    execute: (skill) => sql`INSERT INTO skills ${sql.insert({ ...skill, latest_version: 1 })} RETURNING *`
  })

  const insertVersion = SqlSchema.findOne({
    Request: NewVersion,
    Result: SkillVersion,
    execute: (version) =>
      sql`INSERT INTO skill_versions ${sql.insert({ ...version, content: JSON.stringify(version.content) })} RETURNING *`
  })

  const findVisible = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, skillId: SkillId, userId: Schema.NullOr(UserId) }),
    Result: Skill,
    execute: ({ orgId, skillId, userId }) =>
      sql`SELECT * FROM skills WHERE id = ${skillId} AND org_id = ${orgId} AND ${visibleTo(userId)}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ orgId: OrgId, userId: Schema.NullOr(UserId) }),
    result: Skill,
    select: ({ orgId, userId }) => sql`SELECT * FROM skills WHERE org_id = ${orgId} AND ${visibleTo(userId)}`
  })

  const nextVersion = SqlSchema.findOneOption({
    Request: SkillId,
    Result: Schema.Struct({ latest_version: Schema.Int }),
    execute: (id) => sql`UPDATE skills SET latest_version = latest_version + 1 WHERE id = ${id} RETURNING latest_version`
  })

  const versions = keysetQueryBy(sql, Schema.Int, {
    filter: SkillId,
    result: SkillVersion,
    column: "version",
    select: (skillId) => sql`SELECT * FROM skill_versions WHERE skill_id = ${skillId}`
  })

  const findVersion = SqlSchema.findOneOption({
    Request: Schema.Struct({ skillId: SkillId, version: Schema.Int }),
    Result: SkillVersion,
    execute: ({ skillId, version }) => sql`SELECT * FROM skill_versions WHERE skill_id = ${skillId} AND version = ${version}`
  })

  const mainTexts = SqlSchema.findAll({
    Request: Schema.Array(VersionRef),
    Result: SkillMainText,
    execute: (wanted) =>
      reads.run((sql) =>
        sql`
        SELECT v.skill_id, v.version, v.content->>${SKILL_MAIN_FILE} AS text
        FROM unnest(${wanted.map((ref) => ref.skill_id)}::text[], ${wanted.map((ref) => ref.version)}::int[])
          AS wanted(skill_id, version)
          JOIN skill_versions v ON v.skill_id = wanted.skill_id AND v.version = wanted.version`
      )
  })

  const where = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, name: Schema.UndefinedOr(Schema.String), id: Schema.UndefinedOr(Schema.String) }),
    Result: Skill,
    execute: ({ id, name, orgId }) =>
      sql`SELECT * FROM skills WHERE org_id = ${orgId} AND ${id === undefined ? sql`name = ${name ?? ""}` : sql`id = ${id}`}`
  })

  const personalOf = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, userId: UserId }),
    Result: Skill,
    execute: ({ orgId, userId }) =>
      sql`SELECT * FROM skills WHERE org_id = ${orgId} AND owner_user_id = ${userId} ORDER BY id`
  })

  const remove = SqlSchema.findOneOption({
    Request: SkillId,
    Result: Schema.Struct({ id: SkillId }),
    execute: (id) => sql`DELETE FROM skills WHERE id = ${id} RETURNING id`
  })

  return {
    /** A new skill with its first version; fails with UniqueViolation when its owner has a skill of that name. */
    insert: (skill: typeof NewSkill.Type, content: SkillContent, sizeBytes: number) =>
      Effect.tap(
        uniqueOrDie(insertSkill(skill)),
        Effect.orDie(insertVersion({ skill_id: skill.id, version: 1, content, size_bytes: sizeBytes }))
      ),
    /** A skill of the organization that `userId` (null: an organization key) may see. */
    findVisible: (orgId: OrgId, skillId: SkillId, userId: UserId | null) =>
      Effect.orDie(findVisible({ orgId, skillId, userId })),
    page: (orgId: OrgId, userId: UserId | null, keyset: Keyset) => page({ orgId, userId }, keyset),
    /** Deletes the skill with its versions and grants; whether there was such a skill to delete. */
    remove: (id: SkillId) => Effect.map(Effect.orDie(remove(id)), Option.isSome),
    /** Adds the next version (the skill row is locked until the transaction ends); none when the skill is gone. */
    insertNextVersion: (skillId: SkillId, content: SkillContent, sizeBytes: number) =>
      Effect.flatMap(
        Effect.orDie(nextVersion(skillId)),
        Option.match({
          onNone: () => Effect.succeedNone,
          onSome: ({ latest_version }) =>
            Effect.asSome(Effect.orDie(insertVersion({ skill_id: skillId, version: latest_version, content, size_bytes: sizeBytes })))
        })
      ),
    versions: (skillId: SkillId, keyset: Keyset<number>) => versions(skillId, keyset),
    findVersion: (skillId: SkillId, version: number) => Effect.orDie(findVersion({ skillId, version })),
    /**
     * The SKILL.md text of each version in `wanted` that exists (a deleted skill's versions are
     * gone), in no particular order: one short read, pipelined (a turn's setup reads it at every
     * model call).
     */
    mainTexts: (wanted: ReadonlyArray<VersionRef>) =>
      wanted.length === 0 ? Effect.succeed([]) : Effect.orDie(mainTexts(wanted)),
    /** The skills of the organization named `name`, whoever owns them. */
    named: (orgId: OrgId, name: string) => Effect.orDie(where({ orgId, name, id: undefined })),
    /** The skill `id` of the organization, as a list of none or one. */
    withId: (orgId: OrgId, id: string) => Effect.orDie(where({ orgId, name: undefined, id })),
    personalOf: (orgId: OrgId, userId: UserId) => Effect.orDie(personalOf({ orgId, userId }))
  } as const
})

export class SkillsRepository extends Context.Service<SkillsRepository, Effect.Success<typeof make>>()("SkillsRepository") {
  static readonly layer = Layer.effect(this, make)
}
