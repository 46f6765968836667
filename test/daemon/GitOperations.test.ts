/**
 * The workspace operations of the daemon on real repositories (docs/workspaces.md, "On the
 * machine"): worktree.create (main, named, reused, from a base ref; refusals, a relative path
 * among them; a URL cloned from an empty directory), checkpoint.create (the tar archive and its
 * manifest) and checkpoint.restore into another machine's directory where the repository does not
 * exist (made from the bundle), never writing through a symbolic link of the checkpoint's commit,
 * the same restore twice stashing nothing, and the `.agent-platform/` exclusion when the machine's directory is the repository itself.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { CHECKPOINT_MAX_BYTES } from "../../src/domain/machines/WorkspaceOperations.ts"
import { failureOf, makeTree, outputOf, type Tree } from "./Fixtures.ts"

/** `git status --porcelain` lines, sorted (not trimmed: a leading space is part of a line). */
const statusOf = (cwd: string) =>
  execFileSync("git", ["status", "--porcelain"], { cwd, encoding: "utf8" }).split("\n").filter((line) => line !== "").sort()

const gitIn = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.test", ...args], { cwd, encoding: "utf8" }).trim()

let a: Tree
let b: Tree
beforeEach(() => {
  a = makeTree()
  b = makeTree()
})
afterEach(() => {
  a.remove()
  b.remove()
})

const repository = (tree: Tree) => {
  const dir = tree.path("repo")
  mkdirSync(dir)
  gitIn(dir, "init", "-q", "-b", "main")
  writeFileSync(join(dir, "README.md"), "# R\n")
  gitIn(dir, "add", ".")
  gitIn(dir, "commit", "-q", "-m", "first")
  gitIn(dir, "branch", "release")
  return dir
}

describe("worktree.create", () => {
  it("the main worktree is the repository; a named one is made on its branch, then reused", async () => {
    const repo = repository(a)
    const place = { operation: "worktree.create" as const, repository: repo, workspace_id: "wsp_a", base_ref: null }
    expect(outputOf(await a.run({ ...place, name: null }))).toMatchObject({ path: repo, branch: "main", created: false })
    const made = outputOf(await a.run({ ...place, name: "feature/x", base_ref: "release" }))
    expect(made).toMatchObject({ path: a.path(".agent-platform", "worktrees", "wsp_a", "feature", "x"), branch: "feature/x", created: true })
    expect(gitIn(repo, "branch", "--list", "feature/x")).toContain("feature/x")
    expect(outputOf(await a.run({ ...place, name: "feature/x" }))).toMatchObject({ path: made.path, created: false })
    // The existing branch is checked out as it is.
    expect(outputOf(await a.run({ ...place, name: "release" }))).toMatchObject({ branch: "release", created: true })
  })

  it("refuses: no repository for a named worktree, a missing base ref, a repository outside the directories, not a repository", async () => {
    const repo = repository(a)
    const place = { operation: "worktree.create" as const, workspace_id: "wsp_a", base_ref: null }
    expect(failureOf(await a.run({ ...place, repository: null, name: "x" })).code).toBe("unprocessable")
    expect(outputOf(await a.run({ ...place, repository: null, name: null }))).toMatchObject({ path: a.root, branch: null })
    const missingRef = failureOf(await a.run({ ...place, repository: repo, name: "y", base_ref: "nope" }))
    expect(missingRef).toMatchObject({ code: "unprocessable", message: expect.stringContaining("nope") })
    expect(failureOf(await b.run({ ...place, repository: repo, name: "z" })).code).toBe("forbidden")
    mkdirSync(a.path("plain"))
    expect(failureOf(await a.run({ ...place, repository: a.path("plain"), name: null })).code).toBe("unprocessable")
  })

  it("refuses a repository path inside a repository whose top lies outside the directories", async () => {
    // The machine's directory is a plain directory of a repository around it.
    const around = join(a.root, "..")
    gitIn(around, "init", "-q", "-b", "main")
    gitIn(around, "add", "outside/secret.txt")
    gitIn(around, "commit", "-q", "-m", "the user's")
    mkdirSync(a.path("agent-work"))
    for (const repository of [a.root, a.path("agent-work")]) {
      for (const name of [null, "w"]) {
        const refused = failureOf(await a.run({ operation: "worktree.create", repository, workspace_id: "wsp_a", name, base_ref: null }))
        expect(refused).toEqual({
          code: "forbidden",
          message: `the repository ${repository} is part of the repository ${around}: ${around} lies outside the machine's directories (${a.root})`
        })
      }
    }
    expect(gitIn(around, "branch", "--list")).toBe("* main")
    expect(gitIn(around, "worktree", "list", "--porcelain")).not.toContain(".agent-platform")
  })

  it("clones a URL from an empty directory: a host:path beside a directory host: is not read as a local path", async () => {
    const outside = repository(b)
    // Where the clone of a URL is made; git would read x:/../… as a path inside x: if it ran here.
    mkdirSync(a.path(".agent-platform", "repositories", "x:"), { recursive: true })
    const scpLike = `x:${"/..".repeat(10)}${outside}`
    const previous = process.env.GIT_SSH_COMMAND
    process.env.GIT_SSH_COMMAND = "false"
    try {
      const refused = failureOf(await a.run({ operation: "worktree.create", repository: scpLike, workspace_id: "wsp_scp", name: null, base_ref: null }))
      expect(refused).toMatchObject({ code: "unprocessable", message: expect.stringContaining("git clone failed") })
    } finally {
      if (previous === undefined) delete process.env.GIT_SSH_COMMAND
      else process.env.GIT_SSH_COMMAND = previous
    }
    expect(existsSync(a.path(".agent-platform", "repositories", "wsp_scp", ".git"))).toBe(false)
  })

  it("refuses a relative repository path: the daemon has no directory it would be relative to", async () => {
    for (const relative of ["repo", "./repo", "../repo", "dir/x:y"]) {
      const refused = failureOf(await a.run({ operation: "worktree.create", repository: relative, workspace_id: "wsp_rel", name: null, base_ref: null }))
      expect(refused).toEqual({
        code: "invalid_request",
        message: `the repository ${relative} is a relative path: give an absolute path or a URL (the daemon has no directory it would be relative to)`
      })
    }
    expect(existsSync(a.path(".agent-platform", "repositories", "wsp_rel"))).toBe(false)
  })

  it("excludes .agent-platform/ when the machine's directory is the repository", async () => {
    gitIn(a.root, "init", "-q", "-b", "main")
    writeFileSync(a.path("file.txt"), "x\n")
    gitIn(a.root, "add", ".")
    gitIn(a.root, "commit", "-q", "-m", "first")
    outputOf(await a.run({ operation: "worktree.create", repository: a.root, workspace_id: "wsp_a", name: "w", base_ref: null }))
    expect(readFileSync(join(a.root, ".git", "info", "exclude"), "utf8")).toContain("/.agent-platform/")
    expect(gitIn(a.root, "status", "--porcelain")).toBe("")
  })
})

describe("checkpoints", () => {
  it("packs commits, uncommitted changes and untracked files; restores them where the repository is absent", async () => {
    const repo = repository(a)
    const place = { repository: repo, workspace_id: "wsp_a", name: "work" }
    const { path } = outputOf(await a.run({ operation: "worktree.create", ...place, base_ref: null }))
    writeFileSync(join(path, "new.txt"), "committed\n")
    gitIn(path, "add", "new.txt")
    gitIn(path, "commit", "-q", "-m", "second")
    writeFileSync(join(path, "README.md"), "# R\nchanged\n")
    writeFileSync(join(path, "staged.txt"), "staged\n")
    gitIn(path, "add", "staged.txt")
    writeFileSync(join(path, "loose.txt"), "untracked\n")
    mkdirSync(join(path, "nested", "deeper"), { recursive: true })
    writeFileSync(join(path, "nested", "deeper", "loose.txt"), "nested\n")
    symlinkSync("loose.txt", join(path, "loose-link"))
    const head = gitIn(path, "rev-parse", "HEAD")

    const packed = outputOf(await a.run({ operation: "checkpoint.create", path }))
    expect(packed.manifest).toMatchObject({
      format: "agent-platform-checkpoint/1",
      branch: "work",
      head,
      untracked_files: ["loose-link", "loose.txt", "nested/deeper/loose.txt"]
    })
    expect(packed.manifest.stash).toMatch(/^[0-9a-f]{40}$/)
    // The archive holds the three files.
    const scratch = mkdtempSync(join(b.outside, "archive-"))
    writeFileSync(join(scratch, "c.tar"), Buffer.from(packed.content, "base64"))
    expect(execFileSync("tar", ["-tf", "c.tar"], { cwd: scratch, encoding: "utf8" }).trim().split("\n").sort())
      .toEqual(["checkpoint.json", "repository.bundle", "untracked.tar"])
    // The worktree on A is untouched, and no temporary ref is left.
    expect(readFileSync(join(path, "README.md"), "utf8")).toBe("# R\nchanged\n")
    expect(gitIn(repo, "for-each-ref", "refs/agent-platform")).toBe("")

    const restored = outputOf(await b.run({ operation: "checkpoint.restore", ...place, content: packed.content }))
    expect(restored.path).toBe(b.path(".agent-platform", "worktrees", "wsp_a", "work"))
    expect(restored).toMatchObject({ branch: "work", head })
    expect(readFileSync(join(restored.path, "new.txt"), "utf8")).toBe("committed\n")
    expect(readFileSync(join(restored.path, "README.md"), "utf8")).toBe("# R\nchanged\n")
    expect(readFileSync(join(restored.path, "staged.txt"), "utf8")).toBe("staged\n")
    expect(readFileSync(join(restored.path, "loose.txt"), "utf8")).toBe("untracked\n")
    expect(readFileSync(join(restored.path, "nested", "deeper", "loose.txt"), "utf8")).toBe("nested\n")
    expect(readlinkSync(join(restored.path, "loose-link"))).toBe("loose.txt")
    const status = statusOf(restored.path)
    expect(status).toEqual([" M README.md", "?? loose-link", "?? loose.txt", "?? nested/", "A  staged.txt"])

    // Restoring again over changes replaces them, kept in a stash entry.
    writeFileSync(join(restored.path, "README.md"), "scribbled\n")
    writeFileSync(join(restored.path, "junk.txt"), "junk\n")
    const again = outputOf(await b.run({ operation: "checkpoint.restore", ...place, content: packed.content }))
    expect(readFileSync(join(again.path, "README.md"), "utf8")).toBe("# R\nchanged\n")
    expect(statusOf(again.path)).toEqual(status)
    expect(gitIn(again.path, "stash", "list")).toContain(`agent-platform: kept before restoring checkpoint of work at ${head.slice(0, 12)}`)
    expect(gitIn(again.path, "show", "stash@{0}:README.md")).toBe("scribbled")
    expect(gitIn(again.path, "show", "stash@{0}^3:junk.txt")).toBe("junk")
  })

  it("a restore sent again finds the worktree already the checkpoint: nothing stashed, nothing changed; one byte off is stashed", async () => {
    const repo = repository(a)
    const place = { repository: repo, workspace_id: "wsp_a", name: "work" }
    const { path } = outputOf(await a.run({ operation: "worktree.create", ...place, base_ref: null }))
    writeFileSync(join(path, "README.md"), "# R\nchanged\n")
    writeFileSync(join(path, "staged.txt"), "staged\n")
    gitIn(path, "add", "staged.txt")
    writeFileSync(join(path, "loose.txt"), "untracked\n")
    symlinkSync("loose.txt", join(path, "loose-link"))
    const packed = outputOf(await a.run({ operation: "checkpoint.create", path }))
    const restore = { operation: "checkpoint.restore" as const, ...place, content: packed.content }

    const first = outputOf(await b.run(restore))
    const status = statusOf(first.path)
    const again = outputOf(await b.run(restore))
    expect(again).toEqual(first)
    expect(gitIn(again.path, "stash", "list")).toBe("")
    expect(statusOf(again.path)).toEqual(status)
    expect(readFileSync(join(again.path, "README.md"), "utf8")).toBe("# R\nchanged\n")
    expect(gitIn(again.path, "diff", "--cached", "--name-only")).toBe("staged.txt")
    expect(gitIn(repo, "for-each-ref", "refs/agent-platform")).toBe("")

    // One byte off, in a tracked file or in an untracked one: what the worktree holds is kept in a stash entry.
    const kept = `agent-platform: kept before restoring checkpoint of work at ${packed.manifest.head.slice(0, 12)}`
    writeFileSync(join(again.path, "README.md"), "# R\nchangeD\n")
    outputOf(await b.run(restore))
    expect(gitIn(again.path, "stash", "list")).toContain(kept)
    expect(gitIn(again.path, "show", "stash@{0}:README.md")).toBe("# R\nchangeD")
    expect(readFileSync(join(again.path, "README.md"), "utf8")).toBe("# R\nchanged\n")
    writeFileSync(join(again.path, "loose.txt"), "untrackeD\n")
    outputOf(await b.run(restore))
    expect(gitIn(again.path, "stash", "list").split("\n")).toHaveLength(2)
    expect(gitIn(again.path, "show", "stash@{0}^3:loose.txt")).toBe("untrackeD")
    expect(readFileSync(join(again.path, "loose.txt"), "utf8")).toBe("untracked\n")
    expect(statusOf(again.path)).toEqual(status)
  })

  it("refuses a restore that would leave commits on no branch (the branch ahead, a detached HEAD), changing nothing", async () => {
    const repo = repository(a)
    const place = { repository: repo, workspace_id: "wsp_a", name: "work" }
    const { path } = outputOf(await a.run({ operation: "worktree.create", ...place, base_ref: null }))
    const packed = outputOf(await a.run({ operation: "checkpoint.create", path }))

    // A commit on the branch after the checkpoint.
    writeFileSync(join(path, "later.txt"), "later\n")
    gitIn(path, "add", "later.txt")
    gitIn(path, "commit", "-q", "-m", "later")
    const later = gitIn(path, "rev-parse", "HEAD")
    const ahead = failureOf(await a.run({ operation: "checkpoint.restore", ...place, content: packed.content }))
    expect(ahead.code).toBe("unprocessable")
    expect(ahead.message).toContain("1 commit that the checkpoint does not contain")
    expect(ahead.message).toContain(`git -C ${path} branch work-kept ${later.slice(0, 12)}`)
    expect(gitIn(path, "rev-parse", "HEAD")).toBe(later)
    expect(gitIn(repo, "for-each-ref", "refs/agent-platform")).toBe("")

    // A commit on a detached HEAD (the branch itself back at the checkpoint).
    gitIn(path, "checkout", "-q", "--detach")
    gitIn(path, "branch", "-f", "work", packed.manifest.head)
    writeFileSync(join(path, "detached.txt"), "detached\n")
    gitIn(path, "add", "detached.txt")
    gitIn(path, "commit", "-q", "-m", "detached")
    const detached = gitIn(path, "rev-parse", "HEAD")
    const loose = failureOf(await a.run({ operation: "checkpoint.restore", ...place, content: packed.content }))
    expect(loose.code).toBe("unprocessable")
    expect(loose.message).toContain("2 commits that the checkpoint does not contain")
    expect(gitIn(path, "rev-parse", "HEAD")).toBe(detached)

    // Kept on a branch of their own, the restore goes on and they stay there.
    gitIn(path, "branch", "kept", detached)
    const restored = outputOf(await a.run({ operation: "checkpoint.restore", ...place, content: packed.content }))
    expect(restored).toMatchObject({ branch: "work", head: packed.manifest.head })
    expect(gitIn(repo, "rev-parse", "kept")).toBe(detached)
    expect(gitIn(repo, "rev-list", "--count", `${packed.manifest.head}..kept`)).toBe("2")
  })

  it("writes the untracked files inside the worktree only: never through a symbolic link of the checkpoint's commit", async () => {
    const repo = repository(a)
    const place = { repository: repo, workspace_id: "wsp_a", name: "work" }
    const { path } = outputOf(await a.run({ operation: "worktree.create", ...place, base_ref: null }))
    // The commit holds a link `a` to a directory outside; the worktree holds a directory `a` in its place.
    symlinkSync(b.outside, join(path, "a"))
    gitIn(path, "add", "a")
    gitIn(path, "commit", "-q", "-m", "link")
    gitIn(path, "update-index", "--skip-worktree", "a")
    rmSync(join(path, "a"))
    mkdirSync(join(path, "a"))
    writeFileSync(join(path, "a", "victim.txt"), "PWNED\n")
    const packed = outputOf(await a.run({ operation: "checkpoint.create", path }))
    expect(packed.manifest.untracked_files).toEqual(["a/victim.txt"])

    const refused = failureOf(await b.run({ operation: "checkpoint.restore", ...place, content: packed.content }))
    expect(refused).toMatchObject({ code: "unprocessable", message: expect.stringContaining("a symbolic link at a") })
    expect(existsSync(join(b.outside, "victim.txt"))).toBe(false)
  })

  it("runs no program the repository's configuration or hooks name: core.fsmonitor, a ref update's and a checkout's hooks", async () => {
    const repo = repository(a)
    const marker = (name: string) => join(a.outside, name)
    // What an agent's command could write: an edit_file of them is refused (WriteEdit.test.ts).
    gitIn(repo, "config", "core.fsmonitor", `touch ${marker("fsmonitor")}; false`)
    mkdirSync(join(repo, ".git", "hooks"), { recursive: true })
    for (const hook of ["reference-transaction", "post-checkout"]) {
      writeFileSync(join(repo, ".git", "hooks", hook), `#!/bin/sh\ntouch ${marker(hook)}\n`, { mode: 0o755 })
    }
    const place = { repository: repo, workspace_id: "wsp_a", name: "work" }
    const { path } = outputOf(await a.run({ operation: "worktree.create", ...place, base_ref: null }))
    writeFileSync(join(path, "README.md"), "# R\nchanged\n")
    writeFileSync(join(path, "loose.txt"), "untracked\n")
    const packed = outputOf(await a.run({ operation: "checkpoint.create", path }))
    writeFileSync(join(path, "README.md"), "scribbled\n")
    outputOf(await a.run({ operation: "checkpoint.restore", ...place, content: packed.content }))
    expect(readdirSync(a.outside)).toEqual(["secret.txt"])
  })

  it("refuses a checkpoint over its limit once the limit is passed, never holding the rest: request_too_large", async () => {
    const repo = repository(a)
    // Sparse: tar reads its 8 times the limit quickly; the daemon must stop taking them at the limit.
    writeFileSync(join(repo, "big.bin"), "")
    truncateSync(join(repo, "big.bin"), 8 * CHECKPOINT_MAX_BYTES)
    const before = process.memoryUsage().arrayBuffers
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2)
    try {
      const refused = failureOf(await a.run({ operation: "checkpoint.create", path: repo }))
      expect(refused).toEqual({ code: "request_too_large", message: `the checkpoint is larger than ${CHECKPOINT_MAX_BYTES} bytes, the most that is sent` })
    } finally {
      clearInterval(sampler)
    }
    expect(peak - before).toBeLessThan(3 * CHECKPOINT_MAX_BYTES)
  })

  it("refuses a checkpoint naming refs that are no checkpoint's: the repository's branches are left as they are", async () => {
    const repo = repository(a)
    const release = gitIn(repo, "rev-parse", "release")
    // What another machine could send: its own `release` bundled under that name, named as the checkpoint's ref.
    const theirs = repository(b)
    writeFileSync(join(theirs, "theirs.txt"), "theirs\n")
    gitIn(theirs, "add", "theirs.txt")
    gitIn(theirs, "commit", "-q", "-m", "theirs")
    gitIn(theirs, "branch", "-f", "release", "HEAD")
    const scratch = mkdtempSync(join(b.outside, "archive-"))
    gitIn(theirs, "bundle", "create", join(scratch, "repository.bundle"), "refs/heads/release")
    const manifest = {
      format: "agent-platform-checkpoint/1",
      branch: "work",
      head: gitIn(theirs, "rev-parse", "HEAD"),
      stash: null,
      refs: { head: "refs/heads/release", stash: null },
      untracked_files: []
    }
    writeFileSync(join(scratch, "checkpoint.json"), JSON.stringify(manifest))
    execFileSync("tar", ["-cf", "checkpoint.tar", "checkpoint.json", "repository.bundle"], { cwd: scratch })
    const content = readFileSync(join(scratch, "checkpoint.tar")).toString("base64")

    const refused = failureOf(await a.run({ operation: "checkpoint.restore", repository: repo, workspace_id: "wsp_a", name: "work", content }))
    expect(refused.code).toBe("invalid_request")
    expect(gitIn(repo, "rev-parse", "release")).toBe(release)
  })

  it("refuses a path that is no worktree, and content that is no checkpoint", async () => {
    mkdirSync(a.path("plain"))
    expect(failureOf(await a.run({ operation: "checkpoint.create", path: a.path("plain") })).code).toBe("unprocessable")
    expect(failureOf(await a.run({ operation: "checkpoint.create", path: "relative" })).code).toBe("invalid_request")
    const bad = failureOf(await a.run({
      operation: "checkpoint.restore",
      repository: null,
      workspace_id: "wsp_a",
      name: null,
      content: Buffer.from("not a tar").toString("base64")
    }))
    expect(["unprocessable", "invalid_request"]).toContain(bad.code)
  })
})
