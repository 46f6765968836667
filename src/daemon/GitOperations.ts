/**
 * The workspace operations (src/domain/machines/WorkspaceOperations.ts): worktrees and
 * checkpoints, made with the machine's `git` and `tar`. Repositories and worktrees live inside
 * the machine's directories; a repository given as a path must lie inside them too. A git or tar
 * that fails is `unprocessable` with its message.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { constants, type Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import {
  CHECKPOINT_MAX_BYTES,
  type CheckpointContent,
  type CheckpointCreateOperation,
  CheckpointManifest,
  type CheckpointRestoreOperation,
  cloneDirectory,
  isRelativeRepositoryPath,
  type WorktreeCreateOperation,
  worktreeDirectory,
  type WorktreeLocation
} from "../domain/machines/WorkspaceOperations.ts"
import { attempt, Directories, resolveExisting } from "./Directories.ts"
import { type OperationError, operationError } from "./OperationError.ts"

interface Ran {
  readonly code: number | null
  readonly stdout: Buffer
  readonly stderr: string
}

/** The most a program's output may be, and the failure of one that writes more. */
interface OutputLimit {
  readonly bytes: number
  readonly exceeded: OperationError
}

interface RunOptions {
  /** Written to the program's standard input. */
  readonly input?: Buffer
  readonly limit?: OutputLimit
}

/**
 * Runs a program (no shell) and collects what it wrote. One that writes more than `limit` is
 * killed there, failing with `limit.exceeded`: what it has still to write (a large file it packs)
 * is never held.
 */
const runProgram = (
  program: string,
  args: ReadonlyArray<string>,
  cwd: string,
  { input, limit }: RunOptions = {}
) =>
  Effect.callback<Ran, OperationError>((resume) => {
    const child = spawn(program, args, {
      cwd,
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" }
    })
    const out: Array<Buffer> = []
    let written = 0
    let err = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      written += chunk.byteLength
      if (limit === undefined || written <= limit.bytes) {
        out.push(chunk)
        return
      }
      child.stdout!.destroy()
      child.kill("SIGKILL")
      resume(Effect.fail(limit.exceeded))
    })
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
    child.once("error", (error) => resume(Effect.fail(operationError("unprocessable", `${program} could not run: ${error.message}`))))
    child.once("close", (code) => resume(Effect.succeed({ code, stdout: Buffer.concat(out), stderr: err })))
    if (child.stdin !== null) {
      // A program that exits without reading all of its input must not take the daemon down.
      child.stdin.on("error", () => {})
      child.stdin.end(input)
    }
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * Settings every git the daemon runs takes over the repository's configuration, so that none of
 * it runs a program: a repository's config and hooks are files an agent may have changed (with a
 * command, or on the machine a checkpoint came from), and the daemon runs git without anyone's
 * approval. core.fsmonitor would run its command on `git status` and `git stash`, a hook on a ref
 * update or a checkout, an `ext::` URL a command as its transport; and gpg.program would run on a
 * commit signed by default, should git ever sign the commits `git stash` makes (2.39 does not).
 * Filters (`filter.<driver>.clean`) have no such switch: they need a config that names them, which
 * the daemon's file operations do not write (Directories.ts, refuseGitDirectory).
 */
const CONFIG_OVERRIDES = ["core.fsmonitor=false", "core.hooksPath=/dev/null", "commit.gpgsign=false", "protocol.ext.allow=never"]
  .flatMap((setting) => ["-c", setting])

/** Runs `git args` in `cwd`, as every git of the daemon runs (CONFIG_OVERRIDES). */
const runGit = (cwd: string, args: ReadonlyArray<string>) => runProgram("git", [...CONFIG_OVERRIDES, ...args], cwd)

/** `git args` in `cwd`; its output, trimmed. A non-zero exit is `unprocessable`. */
const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  Effect.flatMap(runGit(cwd, args), (ran) =>
    ran.code === 0
      ? Effect.succeed(ran.stdout.toString("utf8").trim())
      : Effect.fail(operationError("unprocessable", `git ${args[0]} failed: ${ran.stderr.trim() || `exit code ${ran.code}`}`)))

/** Whether `git args` succeeds. */
const gitSucceeds = (cwd: string, ...args: ReadonlyArray<string>) =>
  Effect.map(runGit(cwd, args), (ran) => ran.code === 0)

const exists = (path: string) => Effect.promise(() => fs.stat(path).then(() => true, () => false))

/** The machine's first directory: where clones and worktrees are made. */
const root = Effect.flatMap(Directories, (roots) =>
  roots[0] === undefined
    ? Effect.fail(operationError("unprocessable", "the daemon has no directory to make worktrees in (start it with --dir)"))
    : Effect.succeed(roots[0]))

const isAbsolutePath = (repository: string) => nodePath.isAbsolute(repository)

/** Where a workspace's clone of a URL lives. */
const clonePath = (workspaceId: string) => Effect.map(root, (dir) => nodePath.join(dir, cloneDirectory(workspaceId)))

/** Where a named worktree lives. */
const worktreePath = (workspaceId: string, name: string) =>
  Effect.map(root, (dir) => nodePath.join(dir, worktreeDirectory(workspaceId, name)))

/**
 * When the machine's directory lies inside the repository (the repository itself registered as
 * the directory), `.agent-platform/` (clones, worktrees, scratch files) is added to the
 * repository's `info/exclude`, so that it is never taken for the repository's own files.
 */
const excludeOwnDirectory = (top: string) =>
  Effect.gen(function*() {
    const dir = yield* root
    if (dir !== top && !dir.startsWith(top + nodePath.sep)) return
    const relative = nodePath.relative(top, nodePath.join(dir, ".agent-platform"))
    const exclude = yield* git(top, "rev-parse", "--git-path", "info/exclude")
    const file = nodePath.resolve(top, exclude)
    const line = `/${relative.split(nodePath.sep).join("/")}/`
    const current = yield* Effect.promise(() => fs.readFile(file, "utf8").catch(() => ""))
    if (current.split("\n").includes(line)) return
    yield* Effect.promise(async () => {
      await fs.mkdir(nodePath.dirname(file), { recursive: true })
      await fs.appendFile(file, `${current === "" || current.endsWith("\n") ? "" : "\n"}${line}\n`)
    })
  })

/**
 * The workspace's repository on this machine: the path itself (which must be a git repository
 * inside the directories), or the clone of the URL, cloned when missing. A URL is cloned from an
 * empty directory, so that git never takes it for a path relative to where it runs (`host:path`
 * is one when a directory `host:` is there); a relative path is refused. `fallback` makes a
 * missing clone some other way (from a checkpoint's bundle) when cloning the URL fails.
 */
const repositoryOf = (
  repository: string | null,
  workspaceId: string,
  fallback?: (path: string) => Effect.Effect<void, OperationError>
) =>
  Effect.gen(function*() {
    if (repository === null) return null
    if (isRelativeRepositoryPath(repository)) {
      return yield* Effect.fail(operationError(
        "invalid_request",
        `the repository ${repository} is a relative path: give an absolute path or a URL (the daemon has no directory it would be relative to)`
      ))
    }
    const local = isAbsolutePath(repository)
      ? yield* Effect.result(resolveExisting(nodePath.resolve(repository)))
      : undefined
    if (local !== undefined && local._tag === "Failure" && (local.failure.code === "not_found" || local.failure.code === "forbidden")) {
      // The repository of another machine (absent here, or outside this machine's directories):
      // restored from a checkpoint beside this machine's clones.
      const path = yield* clonePath(workspaceId)
      if (!(yield* exists(nodePath.join(path, ".git")))) {
        if (fallback === undefined) {
          return yield* Effect.fail(local.failure)
        }
        yield* Effect.promise(() => fs.rm(path, { recursive: true, force: true }))
        yield* Effect.promise(() => fs.mkdir(path, { recursive: true }))
        yield* fallback(path)
      }
      return path
    }
    if (local !== undefined) {
      const path = yield* Effect.fromResult(local)
      const toplevel = yield* git(path, "rev-parse", "--show-toplevel").pipe(
        Effect.mapError(() => operationError("unprocessable", `${path} is not a git repository`))
      )
      // A directory that is no repository itself is part of the repository around it, which git
      // then works on (its branches, its stash): that one must lie inside the directories too.
      const top = yield* resolveExisting(toplevel).pipe(
        Effect.mapError((error) =>
          error.code === "forbidden" ? operationError("forbidden", `the repository ${path} is part of the repository ${toplevel}: ${error.message}`) : error
        )
      )
      yield* excludeOwnDirectory(top)
      return top
    }
    const path = yield* clonePath(workspaceId)
    if (!(yield* exists(nodePath.join(path, ".git")))) {
      yield* Effect.promise(() => fs.rm(path, { recursive: true, force: true }))
      yield* Effect.promise(() => fs.mkdir(nodePath.dirname(path), { recursive: true }))
      const cloned = yield* withTempDir((empty) => git(empty, "clone", "--", repository, path)).pipe(Effect.result)
      if (cloned._tag === "Failure") {
        if (fallback === undefined) return yield* Effect.fail(cloned.failure)
        yield* Effect.promise(() => fs.rm(path, { recursive: true, force: true }))
        yield* Effect.promise(() => fs.mkdir(path, { recursive: true }))
        yield* fallback(path)
      }
    }
    return path
  })

const describe = (path: string, created: boolean) =>
  Effect.gen(function*() {
    const branch = yield* git(path, "symbolic-ref", "--short", "-q", "HEAD").pipe(Effect.orElseSucceed(() => ""))
    const head = yield* git(path, "rev-parse", "--verify", "-q", "HEAD").pipe(Effect.orElseSucceed(() => ""))
    return { path, branch: branch === "" ? null : branch, head: head === "" ? null : head, created } satisfies WorktreeLocation
  })

/** Whether `path` is the top of a git worktree. */
const isWorktree = (path: string) =>
  Effect.flatMap(exists(path), (there) =>
    there
      ? Effect.map(
        runGit(path, ["rev-parse", "--show-toplevel"]),
        (ran) => ran.code === 0 && nodePath.resolve(ran.stdout.toString("utf8").trim()) === nodePath.resolve(path)
      )
      : Effect.succeed(false))

/** The start of a new branch: `base_ref`, else `origin/<base_ref>`, else HEAD. */
const startPoint = (repository: string, baseRef: string | null) =>
  Effect.gen(function*() {
    if (baseRef === null) return "HEAD"
    for (const candidate of [baseRef, `origin/${baseRef}`]) {
      if (yield* gitSucceeds(repository, "rev-parse", "--verify", "-q", `${candidate}^{commit}`)) return candidate
    }
    return yield* Effect.fail(operationError("unprocessable", `the base ref ${baseRef} does not exist in the repository`))
  })

export const worktreeCreate = (operation: typeof WorktreeCreateOperation.Type) =>
  Effect.gen(function*() {
    const repository = yield* repositoryOf(operation.repository, operation.workspace_id)
    if (repository === null) {
      if (operation.name !== null) {
        return yield* Effect.fail(operationError("unprocessable", "a named worktree needs the workspace's repository"))
      }
      return { path: yield* root, branch: null, head: null, created: false } satisfies WorktreeLocation
    }
    if (operation.name === null) return yield* describe(repository, false)
    const path = yield* worktreePath(operation.workspace_id, operation.name)
    if (yield* isWorktree(path)) return yield* describe(path, false)
    yield* Effect.promise(() => fs.mkdir(nodePath.dirname(path), { recursive: true }))
    const branchExists = yield* gitSucceeds(repository, "rev-parse", "--verify", "-q", `refs/heads/${operation.name}`)
    if (branchExists) {
      yield* git(repository, "worktree", "add", "--", path, operation.name)
    } else {
      const start = yield* startPoint(repository, operation.base_ref)
      yield* git(repository, "worktree", "add", "-b", operation.name, "--", path, start)
    }
    return yield* describe(path, true)
  })

/** A new, empty scratch directory under the machine's first directory (a sandboxed machine may write nowhere else). */
const withTempDir = <A, E, R>(use: (dir: string) => Effect.Effect<A, E | OperationError, R>) =>
  Effect.acquireUseRelease(
    Effect.flatMap(root, (dir) =>
      Effect.promise(async () => {
        const scratch = nodePath.join(dir, ".agent-platform", "tmp")
        await fs.mkdir(scratch, { recursive: true })
        return fs.mkdtemp(nodePath.join(scratch, "scratch-"))
      })),
    use,
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )

const tar = (cwd: string, args: ReadonlyArray<string>, options?: RunOptions) =>
  Effect.flatMap(runProgram("tar", args, cwd, options), (ran) =>
    ran.code === 0
      ? Effect.succeed(ran.stdout)
      : Effect.fail(operationError("unprocessable", `tar failed: ${ran.stderr.trim() || `exit code ${ran.code}`}`)))

/** An identity for the commits the daemon makes (a stash), when the repository has none. */
const identityFor = (path: string) =>
  Effect.map(gitSucceeds(path, "config", "user.email"), (hasIdentity) =>
    hasIdentity ? [] : ["-c", "user.name=agent-platform", "-c", "user.email=daemon@agent-platform.invalid"])

/** What checkpoint.create sends at most. */
const checkpointLimit: OutputLimit = {
  bytes: CHECKPOINT_MAX_BYTES,
  exceeded: operationError("request_too_large", `the checkpoint is larger than ${CHECKPOINT_MAX_BYTES} bytes, the most that is sent`)
}

export const checkpointCreate = (operation: typeof CheckpointCreateOperation.Type) =>
  Effect.gen(function*() {
    if (!nodePath.isAbsolute(operation.path)) {
      return yield* Effect.fail(operationError("invalid_request", `path must be absolute (got ${JSON.stringify(operation.path)})`))
    }
    const path = yield* resolveExisting(operation.path)
    if (!(yield* isWorktree(path))) return yield* Effect.fail(operationError("unprocessable", `${path} is not the top of a git worktree`))
    const head = yield* git(path, "rev-parse", "--verify", "HEAD").pipe(
      Effect.mapError(() => operationError("unprocessable", `the worktree ${path} has no commit yet`))
    )
    const branchName = yield* git(path, "symbolic-ref", "--short", "-q", "HEAD").pipe(Effect.orElseSucceed(() => ""))
    // `git stash create` makes a commit: it needs an identity, which a fresh machine may lack.
    const stash = yield* git(path, ...(yield* identityFor(path)), "stash", "create", "agent-platform checkpoint")
    const listed = yield* git(path, "ls-files", "--others", "--exclude-standard", "-z")
    const untracked = listed.split("\0").filter((file) => file !== "")
    const suffix = randomBytes(6).toString("hex")
    const refs = {
      head: `refs/agent-platform/checkpoint-${suffix}-head`,
      stash: stash === "" ? null : `refs/agent-platform/checkpoint-${suffix}-stash`
    }
    const manifest: CheckpointManifest = {
      format: "agent-platform-checkpoint/1",
      branch: branchName === "" ? null : branchName,
      head,
      stash: stash === "" ? null : stash,
      refs,
      untracked_files: untracked
    }
    const archive = yield* withTempDir((dir) =>
      Effect.gen(function*() {
        yield* git(path, "update-ref", refs.head, head)
        if (refs.stash !== null) yield* git(path, "update-ref", refs.stash, stash)
        const bundled = yield* git(path, "bundle", "create", nodePath.join(dir, "repository.bundle"), refs.head, ...(refs.stash === null ? [] : [refs.stash])).pipe(
          Effect.ensuring(
            Effect.andThen(
              runGit(path, ["update-ref", "-d", refs.head]),
              refs.stash === null ? Effect.void : runGit(path, ["update-ref", "-d", refs.stash])
            ).pipe(Effect.ignore)
          ),
          Effect.result
        )
        if (bundled._tag === "Failure") return yield* Effect.fail(bundled.failure)
        // The untracked files alone may pass the limit: tar is stopped there, not when it is done.
        const files = yield* tar(path, ["-cf", "-", "--null", "-T", "-"], {
          input: Buffer.from(untracked.map((file) => file + "\0").join("")),
          limit: checkpointLimit
        })
        yield* Effect.promise(() => fs.writeFile(nodePath.join(dir, "untracked.tar"), files))
        yield* Effect.promise(() => fs.writeFile(nodePath.join(dir, "checkpoint.json"), JSON.stringify(manifest, null, 2)))
        return yield* tar(dir, ["-cf", "-", "checkpoint.json", "repository.bundle", "untracked.tar"], { limit: checkpointLimit })
      })
    )
    return { content: archive.toString("base64"), manifest } satisfies CheckpointContent
  })

/**
 * The commits a restore of `branch` at `head` would leave on no branch: those of the branch's
 * current tip and of the worktree's current HEAD (a detached one too) that `head` does not
 * contain and no other branch, tag or remote-tracking branch holds. Newest first.
 */
const commitsLostBy = (repository: string, worktree: string | null, branch: string, head: string) =>
  Effect.gen(function*() {
    const tips: Array<string> = []
    const tip = yield* git(repository, "rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`).pipe(Effect.orElseSucceed(() => ""))
    if (tip !== "") tips.push(tip)
    if (worktree !== null) {
      const current = yield* git(worktree, "rev-parse", "--verify", "-q", "HEAD^{commit}").pipe(Effect.orElseSucceed(() => ""))
      if (current !== "" && !tips.includes(current)) tips.push(current)
    }
    if (tips.length === 0) return []
    const listed = yield* git(
      repository,
      "rev-list",
      ...tips,
      "--not",
      head,
      `--exclude=${branch}`,
      "--branches",
      "--tags",
      "--remotes"
    )
    return listed.split("\n").filter((line) => line !== "")
  })

/** The refusal of a restore that would drop commits: which, and what to do. */
const wouldDropCommits = (path: string, branch: string, lost: ReadonlyArray<string>) => {
  const newest = lost[0]!.slice(0, 12)
  return operationError(
    "unprocessable",
    `the worktree ${path} on this machine has ${lost.length} commit${lost.length === 1 ? "" : "s"} that the checkpoint ` +
      `does not contain (newest ${newest}${lost.length > 1 ? `, oldest ${lost[lost.length - 1]!.slice(0, 12)}` : ""}), ` +
      `on its branch ${branch} or its detached HEAD: restoring the checkpoint would leave them on no branch, so nothing ` +
      `was changed. To keep them, put them on a branch of their own (git -C ${path} branch ${branch}-kept ${newest}) and ` +
      "start the session again: the checkpoint is restored and the commits stay on that branch, to merge or cherry-pick " +
      "afterwards. To give them up, reset the branch (or check out another branch) so that they are on none, and start " +
      "the session again"
  )
}

/** What is at `path` itself (a symbolic link is not followed); undefined when nothing is. */
const entryAt = (path: string) =>
  attempt(path, () =>
    fs.lstat(path).catch((error) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
      throw error
    }))

const kindOf = (entry: Stats) => entry.isSymbolicLink() ? "a symbolic link" : entry.isDirectory() ? "a directory" : "a file"

/**
 * Copies the unpacked entries under `from` to the same names under `to`, a real directory of the
 * worktree, directories first: so every directory a file is written into was looked at and is a
 * real directory, never a symbolic link. A directory of the checkpoint where the worktree has
 * something else, or a file or link where it has a directory, stops the restore; a file or link
 * where the worktree has one is replaced (the link itself, not what it points to).
 */
const placeEntries = (from: string, to: string, worktree: string): Effect.Effect<void, OperationError> =>
  Effect.gen(function*() {
    for (const entry of yield* attempt(from, () => fs.readdir(from, { withFileTypes: true }))) {
      const source = nodePath.join(from, entry.name)
      const target = nodePath.join(to, entry.name)
      const name = nodePath.relative(worktree, target)
      const existing = yield* entryAt(target)
      if (existing !== undefined && (entry.isDirectory() ? !existing.isDirectory() : existing.isDirectory())) {
        return yield* Effect.fail(operationError(
          "unprocessable",
          `the checkpoint's untracked ${name} cannot be restored: the worktree ${worktree} has ${kindOf(existing)} at ${name}, ` +
            "and a restore writes nothing through a symbolic link nor over a directory; the restore stopped there"
        ))
      }
      if (entry.isDirectory()) {
        if (existing === undefined) yield* attempt(target, () => fs.mkdir(target))
        yield* placeEntries(source, target, worktree)
        continue
      }
      if (!entry.isFile() && !entry.isSymbolicLink()) {
        return yield* Effect.fail(operationError("unprocessable", `the checkpoint's untracked ${name} is neither a file, a directory nor a symbolic link`))
      }
      yield* attempt(target, async () => {
        if (existing !== undefined) await fs.unlink(target)
        if (entry.isSymbolicLink()) await fs.symlink(await fs.readlink(source), target)
        else await fs.copyFile(source, target, constants.COPYFILE_EXCL)
      })
    }
  })

/**
 * The checkpoint's untracked files, unpacked into an empty scratch directory of their own (its
 * path). tar itself would write through a symbolic link already on disk, such as one the
 * checkpoint's commit has just checked out, and so outside the worktree; in an empty directory GNU
 * tar's own guards suffice (names with `..` refused, a leading `/` removed, links made last), and
 * the daemon places what it holds (placeEntries).
 */
const unpackUntrackedFiles = (scratch: string) =>
  Effect.gen(function*() {
    // A name of its own: the checkpoint's archive, unpacked beside it, chose the other names there.
    const unpacked = yield* attempt(scratch, () => fs.mkdtemp(nodePath.join(scratch, "untracked-")))
    yield* tar(unpacked, ["-xf", nodePath.join(scratch, "untracked.tar")])
    return unpacked
  })

/** Whether two entries (looked at with lstat) are the same untracked file: kind, executable bit, content or link target. */
const sameUntrackedFile = (one: string, other: string) =>
  Effect.gen(function*() {
    const [a, b] = [yield* entryAt(one), yield* entryAt(other)]
    if (a === undefined || b === undefined) return false
    if (a.isSymbolicLink() && b.isSymbolicLink()) {
      return (yield* attempt(one, () => fs.readlink(one))) === (yield* attempt(other, () => fs.readlink(other)))
    }
    if (!a.isFile() || !b.isFile() || a.size !== b.size || (a.mode & 0o111) !== (b.mode & 0o111)) return false
    const [contentA, contentB] = [yield* attempt(one, () => fs.readFile(one)), yield* attempt(other, () => fs.readFile(other))]
    return contentA.equals(contentB)
  })

/**
 * Whether the worktree at `path` already is the checkpoint, exactly: the branch checked out at
 * the checkpoint's commit, its tracked changes (index and work tree) those of the checkpoint's
 * stash commit (compared as trees: `git stash create` of the worktree against the checkpoint's),
 * and its untracked files the checkpoint's, content included (`unpacked`: the checkpoint's
 * untracked files, null when it has none). A restore sent again (the server stopped after the
 * restore and before it recorded it) finds the worktree so, and changes nothing: stashing the
 * checkpoint's own changes would leave an entry that looks like the user's.
 */
const isCheckpointAlready = (path: string, branch: string, manifest: CheckpointManifest, unpacked: string | null) =>
  Effect.gen(function*() {
    const checkedOut = yield* git(path, "symbolic-ref", "-q", "HEAD").pipe(Effect.orElseSucceed(() => ""))
    const head = yield* git(path, "rev-parse", "--verify", "-q", "HEAD^{commit}").pipe(Effect.orElseSucceed(() => ""))
    if (checkedOut !== `refs/heads/${branch}` || head !== manifest.head) return false
    const changes = yield* git(path, ...(yield* identityFor(path)), "stash", "create")
    // `git stash create` prints nothing when nothing tracked has changed, as checkpoint.create's did.
    if ((manifest.stash === null) !== (changes === "")) return false
    if (manifest.stash !== null) {
      // A stash commit's tree is the work tree, its second parent's the index.
      for (const tree of ["^{tree}", "^2^{tree}"]) {
        if ((yield* git(path, "rev-parse", `${changes}${tree}`)) !== (yield* git(path, "rev-parse", `${manifest.stash}${tree}`))) return false
      }
    }
    const listed = yield* git(path, "ls-files", "--others", "--exclude-standard", "-z")
    const untracked = listed.split("\0").filter((file) => file !== "").sort()
    const expected = [...manifest.untracked_files].sort()
    if (untracked.length !== expected.length || untracked.some((file, index) => file !== expected[index])) return false
    if (unpacked === null) return true
    for (const file of untracked) {
      if (!(yield* sameUntrackedFile(nodePath.join(path, file), nodePath.join(unpacked, file)))) return false
    }
    return true
  })

/**
 * Makes the worktree the checkpoint. Nothing is dropped on the way: a restore that would move the
 * branch off commits the checkpoint does not contain is refused (`unprocessable`, saying what to
 * do), and the worktree's uncommitted changes and untracked files are kept in a stash entry
 * (`git stash list`) before the checkpoint replaces them. A worktree that already is the checkpoint
 * (the same restore sent again) is left as it is, nothing stashed (isCheckpointAlready).
 */
export const checkpointRestore = (operation: typeof CheckpointRestoreOperation.Type) =>
  withTempDir((dir) =>
    Effect.gen(function*() {
      const bytes = Buffer.from(operation.content, "base64")
      if (bytes.byteLength > CHECKPOINT_MAX_BYTES) {
        return yield* Effect.fail(operationError("request_too_large", `the checkpoint is larger than ${CHECKPOINT_MAX_BYTES} bytes`))
      }
      yield* tar(dir, ["-xf", "-"], { input: bytes })
      const manifest = yield* Effect.tryPromise(() => fs.readFile(nodePath.join(dir, "checkpoint.json"), "utf8")).pipe(
        Effect.flatMap((text) => Effect.try(() => JSON.parse(text) as unknown)),
        Effect.flatMap((json) => Effect.try(() => CheckpointManifest.make(json as CheckpointManifest))),
        Effect.mapError(() => operationError("invalid_request", "the checkpoint has no checkpoint.json, or not one checkpoint.create writes"))
      )
      const bundle = nodePath.join(dir, "repository.bundle")
      const repository = yield* repositoryOf(operation.repository, operation.workspace_id, (path) =>
        Effect.asVoid(git(path, "init", "-q")))
      if (repository === null) {
        return yield* Effect.fail(operationError("unprocessable", "a checkpoint is restored into the workspace's repository; it has none"))
      }
      const refspecs = [`+${manifest.refs.head}:${manifest.refs.head}`, ...(manifest.refs.stash === null ? [] : [`+${manifest.refs.stash}:${manifest.refs.stash}`])]
      const removeRefs = Effect.andThen(
        runGit(repository, ["update-ref", "-d", manifest.refs.head]),
        manifest.refs.stash === null ? Effect.void : runGit(repository, ["update-ref", "-d", manifest.refs.stash])
      ).pipe(Effect.ignore)
      return yield* Effect.gen(function*() {
        yield* git(repository, "fetch", "--no-tags", bundle, ...refspecs)
        const branch = manifest.branch ?? operation.name ?? "agent-platform-restored"
        const path = operation.name === null ? repository : yield* worktreePath(operation.workspace_id, operation.name)
        const existing = yield* isWorktree(path)
        const lost = yield* commitsLostBy(repository, existing ? path : null, branch, manifest.head)
        if (lost.length > 0) return yield* Effect.fail(wouldDropCommits(path, branch, lost))
        const untracked = manifest.untracked_files.length > 0 ? yield* unpackUntrackedFiles(dir) : null
        if (existing && (yield* isCheckpointAlready(path, branch, manifest, untracked))) return yield* describe(path, false)
        if (!existing) {
          yield* Effect.promise(() => fs.rm(path, { recursive: true, force: true }))
          yield* Effect.promise(() => fs.mkdir(nodePath.dirname(path), { recursive: true }))
          yield* git(repository, "worktree", "prune")
          yield* git(repository, "worktree", "add", "-f", "-B", branch, "--", path, manifest.head)
        } else if ((yield* git(path, "status", "--porcelain")) !== "") {
          // What the worktree holds that is not committed is kept, not discarded.
          yield* git(
            path,
            ...(yield* identityFor(path)),
            "stash",
            "push",
            "--include-untracked",
            "-q",
            "-m",
            `agent-platform: kept before restoring checkpoint of ${branch} at ${manifest.head.slice(0, 12)}`
          )
        }
        // A repository just made from the bundle has no commit checked out yet: nothing to discard.
        yield* runGit(path, ["reset", "--hard", "-q"])
        yield* git(path, "clean", "-fdq")
        yield* git(path, "checkout", "-q", "-f", "-B", branch, manifest.head)
        if (manifest.stash !== null) yield* git(path, "stash", "apply", "--index", manifest.stash)
        if (untracked !== null) yield* placeEntries(untracked, path, path)
        return yield* describe(path, false)
      }).pipe(Effect.ensuring(removeRefs))
    })
  )
