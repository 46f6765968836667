/**
 * The git operations of workspaces (docs/workspaces.md, "On the machine"), executed by the daemon
 * inside its first directory (`root`):
 *
 * - the repository of a workspace is `repository` itself when it is an absolute path (an existing
 *   git repository inside the machine's directories), else a clone of the URL at
 *   `<root>/.agent-platform/repositories/<workspace_id>`, made on first use;
 * - a named worktree lives at `<root>/.agent-platform/worktrees/<workspace_id>/<name>` on the
 *   branch `<name>` (made from `base_ref`, else the repository's HEAD, when it does not exist);
 * - the main worktree is the repository itself (or `root` when the workspace has no repository).
 *
 * A checkpoint is a tar archive (`checkpoint.json`, `repository.bundle`, `untracked.tar`), sent
 * in base64: see CheckpointManifest.
 */
import { Schema } from "effect"
import { base64Length } from "./MachineFiles.ts"

/** The largest checkpoint (decoded bytes) a daemon makes or restores. */
export const CHECKPOINT_MAX_BYTES = 32 * 1024 * 1024

/**
 * Whether a workspace's repository is a relative path (`repo`, `./repo`): neither an absolute path
 * (starting with `/`) nor a URL (as in git, a colon before any slash: `https://…`, `file://…`,
 * `git@host:repo.git`). It is refused by the server (`repository.url`) and by the daemon alike:
 * the daemon has no directory it would be relative to.
 */
export const isRelativeRepositoryPath = (repository: string) => !repository.startsWith("/") && !/^[^/]*:/.test(repository)

/** A workspace id as one segment of a path on a machine: characters outside `[A-Za-z0-9_.-]` become `_`. */
const pathSegment = (workspaceId: string) => workspaceId.replace(/[^A-Za-z0-9_.-]/g, "_")

/** Where, relative to the machine's first directory, a workspace's repository URL is cloned. */
export const cloneDirectory = (workspaceId: string) => `.agent-platform/repositories/${pathSegment(workspaceId)}`

/** Where, relative to the machine's first directory, a workspace's named worktree lives. */
export const worktreeDirectory = (workspaceId: string, name: string) =>
  `.agent-platform/worktrees/${pathSegment(workspaceId)}/${name}`

const Place = {
  /** The workspace's repository: an absolute path on the machine, a clonable URL, or null (no repository). */
  repository: Schema.NullOr(Schema.String),
  workspace_id: Schema.String,
  /** The worktree's name (and branch); null for the main worktree. */
  name: Schema.NullOr(Schema.String)
}

/** Makes (or finds) a worktree and its branch; answers where it is. */
export const WorktreeCreateOperation = Schema.Struct({
  operation: Schema.Literal("worktree.create"),
  ...Place,
  /** Where a new branch starts: a ref of the repository (or `origin/<base_ref>`); null: HEAD. */
  base_ref: Schema.NullOr(Schema.String)
})

export const WorktreeLocation = Schema.Struct({
  path: Schema.String,
  /** The branch checked out there; null when the path is no git worktree (a workspace without repository). */
  branch: Schema.NullOr(Schema.String),
  head: Schema.NullOr(Schema.String),
  /** This request made the worktree (false: it existed). */
  created: Schema.Boolean
}).annotate({ identifier: "WorktreeLocation" })
export type WorktreeLocation = typeof WorktreeLocation.Type

/** Packs the worktree at `path`: its commits, its uncommitted changes and its untracked files. */
export const CheckpointCreateOperation = Schema.Struct({
  operation: Schema.Literal("checkpoint.create"),
  path: Schema.String
})

/** A commit's full id (SHA-1 or SHA-256), never something git would read as an option or a name. */
const CommitId = Schema.String.check(Schema.isPattern(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/))

/**
 * A ref the bundle carries a commit under, as checkpoint.create names them. A restore fetches it
 * into the repository under the same name and deletes it afterwards: any other name (a branch of
 * the repository, `refs/heads/release`) would overwrite, then delete, that branch.
 */
const CheckpointRef = Schema.String.check(Schema.isPattern(/^refs\/agent-platform\/checkpoint-[0-9a-f]{12}-(?:head|stash)$/))

/** What `checkpoint.json` says. */
export const CheckpointManifest = Schema.Struct({
  format: Schema.Literal("agent-platform-checkpoint/1"),
  /** The branch checked out (null: a detached HEAD). */
  branch: Schema.NullOr(Schema.String),
  /** The commit checked out; in the bundle as `refs.head`. */
  head: CommitId,
  /** A `git stash create` commit of the uncommitted changes to tracked files (index and work tree); null: none. */
  stash: Schema.NullOr(CommitId),
  /** The ref names the bundle carries the two commits under. */
  refs: Schema.Struct({ head: CheckpointRef, stash: Schema.NullOr(CheckpointRef) }),
  /** The untracked (not ignored) files, packed in `untracked.tar`. */
  untracked_files: Schema.Array(Schema.String)
}).annotate({ identifier: "CheckpointManifest" })
export type CheckpointManifest = typeof CheckpointManifest.Type

/** A checkpoint as the daemon sends it: at most CHECKPOINT_MAX_BYTES, in base64. */
export const CheckpointContent = Schema.Struct({
  /** The tar archive, base64. */
  content: Schema.String.pipe(Schema.check(Schema.isMaxLength(base64Length(CHECKPOINT_MAX_BYTES)))),
  manifest: CheckpointManifest
}).annotate({ identifier: "CheckpointContent" })
export type CheckpointContent = typeof CheckpointContent.Type

/**
 * Makes the worktree (as `worktree.create` places it) exactly the checkpoint: its branch at the
 * checkpoint's commit, the uncommitted changes applied, the untracked files written. What the
 * worktree held before is discarded. A repository that is missing and cannot be cloned is made
 * from the checkpoint's bundle.
 */
export const CheckpointRestoreOperation = Schema.Struct({
  operation: Schema.Literal("checkpoint.restore"),
  ...Place,
  content: Schema.String
})
