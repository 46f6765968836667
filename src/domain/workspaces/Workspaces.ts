/**
 * Workspaces (docs/workspaces.md): a person's workspace on a repository, in one project of one
 * organization; its worktrees (WorktreeDescriptor, spec 2.13); the sessions started in it
 * (`POST /api/v1/workspaces/{workspace_id}/sessions`); and worktree migration.
 */
import { HttpApiSchema } from "effect/http-api"
import { Schema, SchemaTransformation } from "effect"
import { isRelativeRepositoryPath } from "../machines/WorkspaceOperations.ts"
import { fieldsMessage } from "../shared/Errors.ts"
import { optional } from "../shared/Optional.ts"
import {
  AgentId,
  MachineId,
  MachinePoolId,
  OrgId,
  ProjectId,
  UserMachinePathId,
  WorkspaceId,
  WorkspaceSessionId,
  WorktreeId
} from "../shared/Ids.ts"
import { Metadata } from "../shared/Metadata.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Sha256Digest } from "../shared/Sha256Digest.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { CodeMode, ModelName, ProviderKey, Thinking, VoiceLanguage } from "./UserSettings.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

const REF_CHARACTERS = "must be 1 to 100 characters of [A-Za-z0-9._/-]"

/**
 * What `git check-ref-format` refuses in a ref name made of REF_CHARACTERS (a conservative subset
 * of what git takes: no `@`, `~`, `^`, `:`, `?`, `*`, `[`, `\`, space or control characters, so no
 * `@{` or lone `@` either), said in the caller's words; undefined when git takes it.
 */
const refNameProblem = (ref: string): string | undefined => {
  if (ref.startsWith("-")) return "must not start with -"
  if (ref.includes("..")) return "must not contain .."
  const parts = ref.split("/")
  if (parts.includes("")) return "must not start or end with /, nor contain //"
  if (parts.some((part) => part.startsWith("."))) return "must not have a part (between slashes) starting with ."
  if (parts.some((part) => part.endsWith(".lock"))) return "must not have a part (between slashes) ending with .lock"
  if (ref.endsWith(".")) return "must not end with ."
  return undefined
}

/** A git ref name as `git check-ref-format` takes it (a conservative subset): where new branches start. */
export const GitRefName = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[A-Za-z0-9._\/-]{1,100}$/u, { message: REF_CHARACTERS })),
  Schema.check(Schema.makeFilter((ref) => refNameProblem(ref) ?? true))
)

/**
 * The name of a branch the platform makes or checks out, as `git check-ref-format --branch`
 * takes it (a conservative subset), and without a `refs/` prefix: git would make a branch named
 * `refs/heads/…` literally (the ref `refs/heads/refs/heads/…`), which is never what was meant.
 */
export const GitBranchName = GitRefName.pipe(
  Schema.check(Schema.makeFilter((name) =>
    name === "HEAD"
      ? "must not be HEAD, which git reserves for the current commit"
      : name.startsWith("refs/")
      ? "must not start with refs/: give the branch's own name (main, not refs/heads/main)"
      : true
  ))
)

/**
 * A clonable URL, or an absolute path on the machine. A relative path is refused
 * (isRelativeRepositoryPath, the daemon's rule too): the daemon has no directory it would be
 * relative to. As in git, a colon before any slash makes a URL (`https://…`, `file://…`,
 * `git@host:repo.git`); anything else must start with `/`.
 */
export const RepositoryUrl = Schema.String.pipe(
  Schema.check(Schema.isMinLength(1, { message: "must not be empty" })),
  Schema.check(Schema.isMaxLength(2048, { message: "must be at most 2048 characters" })),
  Schema.check(Schema.makeFilter((url) => !/[\0\n\r]/.test(url) && !url.startsWith("-") || "must not start with - or contain NUL or line breaks")),
  Schema.check(Schema.makeFilter((url) =>
    !isRelativeRepositoryPath(url) ||
    "must be a clonable URL (https://, ssh://, file://, host:path) or an absolute path on the machine, not a relative path"
  ))
)

/** Where the repository comes from: a clonable URL or an absolute path on the machine; the ref new branches start from. */
export const Repository = Schema.Struct({
  url: optional(Schema.NullOr(RepositoryUrl)),
  base_ref: optional(Schema.NullOr(GitRefName))
}).annotate({ identifier: "WorkspaceRepository" })
export type Repository = typeof Repository.Type

export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: WorkspaceId,
  name: Schema.String,
  org_id: OrgId,
  project_id: ProjectId,
  repository: Schema.Struct({ url: Schema.NullOr(Schema.String), base_ref: Schema.NullOr(Schema.String) }),
  default_machine_id: Schema.NullOr(MachineId),
  machine_pool_id: Schema.NullOr(MachinePoolId),
  sync_enabled: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export const CreateWorkspace = Schema.Struct({
  name: ResourceName,
  org_id: OrgId,
  project_id: ProjectId,
  repository: Repository,
  default_machine_id: optional(Schema.NullOr(MachineId)),
  machine_pool_id: optional(Schema.NullOr(MachinePoolId)),
  sync_enabled: optional(Schema.Boolean)
})
export type CreateWorkspace = typeof CreateWorkspace.Type

export const UpdateWorkspace = Schema.Struct({
  name: optional(ResourceName),
  repository: optional(Schema.Struct({
    url: optional(Schema.NullOr(RepositoryUrl)),
    base_ref: optional(Schema.NullOr(GitRefName))
  })),
  default_machine_id: optional(Schema.NullOr(MachineId)),
  machine_pool_id: optional(Schema.NullOr(MachinePoolId)),
  sync_enabled: optional(Schema.Boolean)
})
export type UpdateWorkspace = typeof UpdateWorkspace.Type

export const WorktreeType = Schema.Literals(["LOCAL", "REMOTE"])
export type WorktreeType = typeof WorktreeType.Type

/** A checkpoint's id: the SHA-256 of its bytes. */
export const CheckpointId = Sha256Digest

export class WorktreeDescriptor extends Schema.Class<WorktreeDescriptor>("WorktreeDescriptor")({
  id: WorktreeId,
  workspace_id: WorkspaceId,
  is_main: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp,
  name: Schema.NullOr(Schema.String),
  path: Schema.NullOr(Schema.String),
  worktree_type: Schema.NullOr(WorktreeType),
  user_machine_path: optional(Schema.Struct({
    id: UserMachinePathId,
    machine_id: MachineId,
    local_path: Schema.NullOr(Schema.String)
  })),
  managed_machine_id: Schema.NullOr(MachineId),
  last_heartbeat_at: Schema.NullOr(Timestamp),
  last_synced_checkpoint_id: Schema.NullOr(CheckpointId),
  checkpoint_restore_pending: Schema.Boolean,
  current_checkpoint_id: Schema.NullOr(CheckpointId),
  checkpoint_metadata: JsonObject
}) {}

const OptionalId = optional(Schema.NullOr(Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(128)))))

/** Per-session overrides of the user's settings (the `code` and `voice` sections). */
export const SessionSettings = Schema.Struct({
  code: optional(Schema.Struct({
    mode: optional(CodeMode),
    default_provider: optional(ProviderKey),
    providers: optional(Schema.Record(ProviderKey, Schema.Struct({ model: optional(ModelName), thinking: optional(Thinking) })))
  })),
  voice: optional(Schema.Struct({ language: optional(VoiceLanguage) }))
}).annotate({ identifier: "SessionSettings" })
export type SessionSettings = typeof SessionSettings.Type

export const LaunchSession = Schema.Struct({
  machine_id: optional(Schema.NullOr(MachineId)),
  user_session_id: optional(Schema.NullOr(WorkspaceSessionId)),
  metadata: optional(Metadata),
  initial_prompt: optional(Schema.NullOr(Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(100_000))))),
  worktree_name: optional(Schema.NullOr(GitBranchName)),
  session_settings: optional(Schema.NullOr(SessionSettings)),
  resume_session_id: OptionalId,
  agent_session_id: optional(Schema.NullOr(AgentId))
})
export type LaunchSession = typeof LaunchSession.Type

export const SessionPayload = Schema.Struct({
  session_id: WorkspaceSessionId,
  agent_id: AgentId,
  worktree_id: WorktreeId,
  machine_id: MachineId,
  events_path: Schema.String
}).annotate({ identifier: "SessionPayload" })

/**
 * A session that runs: `{status: "ok", payload}`. One that could not start on its machine is an
 * error answer of the same shape, `{status: "error", payload: {code, error}}` (SessionMachineOffline
 * and the others below); a request that is wrong is the API's error body (docs/workspaces.md).
 */
export const LaunchedSession = Schema.Struct({ status: Schema.Literal("ok"), payload: SessionPayload })
  .annotate({ identifier: "LaunchedSession" })
export type LaunchedSession = typeof LaunchedSession.Type

export const MigrateWorktree = Schema.Struct({
  target_type: WorktreeType,
  target_machine_id: optional(Schema.NullOr(MachineId)),
  source: optional(Schema.Literals(["checkpoint", "base_ref"])),
  worktree_name: optional(Schema.NullOr(GitBranchName))
})
export type MigrateWorktree = typeof MigrateWorktree.Type

export const MigratedWorktree = Schema.Struct({
  worktree: WorktreeDescriptor,
  status: Schema.Literal("migrated")
}).annotate({ identifier: "MigratedWorktree" })

/**
 * A session that could not start on its machine answers `{status: "error", payload: {code, error}}`
 * with the HTTP status of the code: 409 `daemon_runtime_unregistered` (no daemon connected),
 * 422 `unprocessable` (the machine refused: git failed, the repository cannot be cloned),
 * 503 `service_unavailable` (the daemon did not answer in time).
 */
const sessionFailure = <const Tag extends string, const Code extends string>(tag: Tag, code: Code, status: number) => {
  class Failure extends Schema.TaggedError<Failure>()(tag, { error: Schema.String }) {
    static readonly code = code
    static readonly Wire = Schema.Struct({
      status: Schema.Literal("error"),
      payload: Schema.Struct({ code: Schema.Literal(code), error: Schema.String })
    }).annotate({ identifier: `${tag}Body` }).pipe(
      Schema.decodeTo(
        Failure,
        SchemaTransformation.transform({
          decode: (wire) => ({ _tag: tag, error: wire.payload.error }),
          encode: (failure) => ({ status: "error" as const, payload: { code, error: failure.error } })
        })
      ),
      HttpApiSchema.status(status)
    )
    // Effect 3's message of a TaggedError (its fields); Effect 4's would be empty.
    override get message() {
      return fieldsMessage(this, ["error"])
    }
  }
  return Failure
}

export class SessionMachineOffline extends sessionFailure("SessionMachineOffline", "daemon_runtime_unregistered", 409) {}
export class SessionRefused extends sessionFailure("SessionRefused", "unprocessable", 422) {}
export class SessionMachineTimeout extends sessionFailure("SessionMachineTimeout", "service_unavailable", 503) {}
