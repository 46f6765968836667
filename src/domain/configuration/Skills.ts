/**
 * Skills (docs/skills.md): a named bundle of instructions (`SKILL.md`) and optional files, owned
 * by a project or personal to a member, with immutable numbered versions, shared with other
 * projects through grants. Ownership never moves.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { OrgId, ProjectId, SkillGrantId, SkillId, UserId } from "../shared/Ids.ts"
import { pointerSegment } from "../shared/JsonPointer.ts"
import { hasInvisibleOrControl, INVISIBLE_OR_CONTROL_MESSAGE } from "../shared/InvisibleCharacters.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"

/** Limits of one version's content (docs/skills.md). */
export const SKILL_CONTENT_MAX_BYTES = 512 * 1024
export const SKILL_MAX_FILES = 100
export const SKILL_PATH_MAX_LENGTH = 255
export const SKILL_DESCRIPTION_MAX_LENGTH = 1024

/** The main file of every version. */
export const SKILL_MAIN_FILE = "SKILL.md"

export const SkillContent = Schema.Struct({
  [SKILL_MAIN_FILE]: Schema.String,
  files: optional(Schema.Record(Schema.String, Schema.String))
}).annotate({
  identifier: "SkillContent",
  description: "SKILL.md text plus optional files keyed by relative path (docs/skills.md for the limits)"
})
export type SkillContent = typeof SkillContent.Type

/** A problem with one part of a skill's content, as a JSON pointer into the request body. */
export interface SkillContentProblem {
  readonly path: string
  readonly message: string
}

const pathProblem = (path: string): string | undefined => {
  if (path.length === 0) return "must not be empty"
  if (path.length > SKILL_PATH_MAX_LENGTH) return `must be at most ${SKILL_PATH_MAX_LENGTH} characters`
  if (hasInvisibleOrControl(path)) return INVISIBLE_OR_CONTROL_MESSAGE
  if (path.includes("\\")) return "must use / as separator, not \\"
  if (path.startsWith("/")) return "must be relative (no leading /)"
  const segments = path.split("/")
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    return "must not contain empty, . or .. segments"
  }
  if (path === SKILL_MAIN_FILE) return `${SKILL_MAIN_FILE} is given by the ${SKILL_MAIN_FILE} field, not in files`
  return undefined
}

const utf8 = new TextEncoder()
const utf8Bytes = (text: string) => utf8.encode(text).length

/** UTF-8 size of the content: SKILL.md, every file's path and text. */
export const skillContentBytes = (content: SkillContent): number =>
  utf8Bytes(content[SKILL_MAIN_FILE]) +
  Object.entries(content.files ?? {}).reduce((total, [path, text]) => total + utf8Bytes(path) + utf8Bytes(text), 0)

/** Shape problems of content (paths, empty SKILL.md, file count); size is checked apart. */
export const skillContentProblems = (content: SkillContent, pointer: string): ReadonlyArray<SkillContentProblem> => {
  const problems: Array<SkillContentProblem> = []
  if (content[SKILL_MAIN_FILE].trim() === "") {
    problems.push({ path: `${pointer}/${SKILL_MAIN_FILE}`, message: "must contain a non-whitespace character" })
  }
  const paths = Object.keys(content.files ?? {})
  if (paths.length > SKILL_MAX_FILES) {
    problems.push({ path: `${pointer}/files`, message: `must have at most ${SKILL_MAX_FILES} files (got ${paths.length})` })
  }
  for (const path of paths) {
    const problem = pathProblem(path)
    if (problem !== undefined) problems.push({ path: `${pointer}/files/${pointerSegment(path)}`, message: problem })
  }
  return problems
}

export class Skill extends Schema.Class<Skill>("Skill")({
  id: SkillId,
  org_id: OrgId,
  name: Schema.String,
  description: Schema.String,
  owner_project_id: Schema.NullOr(ProjectId).annotate({ description: "the owning project; null for a personal skill" }),
  owner_user_id: Schema.NullOr(UserId).annotate({ description: "the member a personal skill belongs to" }),
  latest_version: Schema.Int,
  created_at: Timestamp
}) {}

export class SkillVersion extends Schema.Class<SkillVersion>("SkillVersion")({
  skill_id: SkillId,
  version: Schema.Int,
  content: SkillContent,
  size_bytes: Schema.Int,
  created_at: Timestamp
}) {}

export class SkillGrant extends Schema.Class<SkillGrant>("SkillGrant")({
  id: SkillGrantId,
  org_id: OrgId,
  skill_id: SkillId,
  target_project_id: ProjectId,
  created_at: Timestamp
}) {}

const Description = Schema.String.pipe(
  Schema.check(Schema.makeFilter((text) => text.trim() !== "" || "must not be empty: the model reads it to decide when to use the skill")),
  Schema.check(Schema.isMaxLength(SKILL_DESCRIPTION_MAX_LENGTH))
)

export const CreateSkill = Schema.Struct({
  name: ResourceName,
  description: Description,
  owner_project_id: optional(ProjectId),
  owner: optional(Schema.Literal("personal")),
  content: SkillContent
}).annotate({ description: "exactly one of owner_project_id or owner: \"personal\"" })

export const CreateSkillVersion = Schema.Struct({ content: SkillContent })
