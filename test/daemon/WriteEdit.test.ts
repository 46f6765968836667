/**
 * The writing operations on a real directory tree: write_file, edit_file and the files route's
 * file.read / file.write, with the digest preconditions (expected_digest_required and
 * file_content_conflict carrying the current digest), read-only files, size caps, and writes
 * that would escape the machine's directory through `..`, a symlinked parent or a dangling link;
 * concurrent writes to one path, of which exactly one meets the precondition they all expect;
 * writes into a git directory, refused.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, truncateSync } from "node:fs"
import type { Operation, Outcome } from "../../src/domain/machines/DaemonProtocol.ts"
import { FILE_TRANSFER_MAX_BYTES } from "../../src/domain/machines/MachineFiles.ts"
import { EDIT_MAX_BYTES } from "../../src/domain/machines/MachineTools.ts"
import { failureOf, makeTree, outputOf, sha256, type Tree } from "./Fixtures.ts"

let tree: Tree
beforeEach(() => {
  tree = makeTree()
})
afterEach(() => tree.remove())

/** The one outcome that succeeded (the test fails unless exactly one did) and the failures of the others. */
const oneWinner = (outcomes: ReadonlyArray<Outcome>) => {
  const winners = outcomes.flatMap((outcome, index) => outcome.outcome === "succeeded" ? [index] : [])
  expect(winners).toHaveLength(1)
  return { winner: winners[0]!, failures: outcomes.filter((outcome) => outcome.outcome === "failed").map(failureOf) }
}

const CONCURRENT_WRITES = 16

describe("write_file", () => {
  it("creates a file and its missing directories without a digest", async () => {
    const output = outputOf(await tree.tool("write_file", { path: "new/dir/file.txt", content: "fresh\n" }))
    expect(output).toEqual({ path: tree.path("new/dir/file.txt"), digest: sha256("fresh\n"), size: 6, created: true })
    expect(tree.read("new/dir/file.txt")).toBe("fresh\n")
  })

  it("replaces an existing file only with the digest it has now", async () => {
    tree.write("a.txt", "one\n")
    const required = failureOf(await tree.tool("write_file", { path: "a.txt", content: "two\n" }))
    expect(required).toMatchObject({ code: "expected_digest_required", current_digest: sha256("one\n") })
    const conflict = failureOf(await tree.tool("write_file", { path: "a.txt", content: "two\n", expected_digest: sha256("zero\n") }))
    expect(conflict).toMatchObject({ code: "file_content_conflict", current_digest: sha256("one\n") })
    expect(tree.read("a.txt")).toBe("one\n")
    const written = outputOf(await tree.tool("write_file", { path: "a.txt", content: "two\n", expected_digest: required.current_digest }))
    expect(written).toEqual({ path: tree.path("a.txt"), digest: sha256("two\n"), size: 4, created: false })
    expect(tree.read("a.txt")).toBe("two\n")
  })

  it("answers file_content_conflict without a current digest when the file to replace is gone", async () => {
    const failure = failureOf(await tree.tool("write_file", { path: "gone.txt", content: "x", expected_digest: sha256("old") }))
    expect(failure.code).toBe("file_content_conflict")
    expect(failure.current_digest).toBeUndefined()
    expect(existsSync(tree.path("gone.txt"))).toBe(false)
  })

  it("keeps the permission bits of the file it replaces", async () => {
    tree.write("script.sh", "#!/bin/sh\n")
    chmodSync(tree.path("script.sh"), 0o750)
    outputOf(await tree.tool("write_file", { path: "script.sh", content: "#!/bin/sh\necho\n", expected_digest: sha256("#!/bin/sh\n") }))
    expect(statSync(tree.path("script.sh")).mode & 0o7777).toBe(0o750)
  })

  it("refuses a read-only file, a directory, and content over the cap", async () => {
    tree.write("locked.txt", "locked\n")
    chmodSync(tree.path("locked.txt"), 0o444)
    const readOnly = failureOf(await tree.tool("write_file", { path: "locked.txt", content: "x", expected_digest: sha256("locked\n") }))
    expect(readOnly.code).toBe("file_read_only")
    expect(tree.read("locked.txt")).toBe("locked\n")
    mkdirSync(tree.path("dir"))
    expect(failureOf(await tree.tool("write_file", { path: "dir", content: "x" })).code).toBe("not_a_file")
    const large = failureOf(await tree.tool("write_file", { path: "big.txt", content: "x".repeat(EDIT_MAX_BYTES + 1) }))
    expect(large.code).toBe("request_too_large")
    expect(existsSync(tree.path("big.txt"))).toBe(false)
  })

  it("never writes outside: through .., a symlinked parent, or a dangling symlink", async () => {
    tree.link("out-dir", tree.outside)
    tree.link("dangling", `${tree.outside}/created-through-link.txt`)
    for (const path of ["../outside/new.txt", "out-dir/new.txt", "out-dir/deeper/new.txt", "dangling"]) {
      expect(failureOf(await tree.tool("write_file", { path, content: "x" })).code).toBe("forbidden")
    }
    const secret = `${tree.outside}/secret.txt`
    expect(failureOf(await tree.tool("write_file", { path: "out-dir/secret.txt", content: "x", expected_digest: sha256("the secret\n") })).code)
      .toBe("forbidden")
    expect(readFileSync(secret, "utf8")).toBe("the secret\n")
    expect(existsSync(`${tree.outside}/new.txt`)).toBe(false)
    expect(existsSync(`${tree.outside}/deeper`)).toBe(false)
    expect(existsSync(`${tree.outside}/created-through-link.txt`)).toBe(false)
  })
})

describe("edit_file", () => {
  it("replaces text that occurs once, under the digest precondition", async () => {
    tree.write("code.ts", "const a = 1\nconst b = 2\n")
    const digest = sha256("const a = 1\nconst b = 2\n")
    const required = failureOf(await tree.tool("edit_file", { path: "code.ts", old_text: "a = 1", new_text: "a = 10" }))
    expect(required).toMatchObject({ code: "expected_digest_required", current_digest: digest })
    const conflict = failureOf(
      await tree.tool("edit_file", { path: "code.ts", old_text: "a = 1", new_text: "a = 10", expected_digest: sha256("other") })
    )
    expect(conflict).toMatchObject({ code: "file_content_conflict", current_digest: digest })
    const edited = outputOf(
      await tree.tool("edit_file", { path: "code.ts", old_text: "a = 1", new_text: "a = 10", expected_digest: digest })
    )
    const after = "const a = 10\nconst b = 2\n"
    expect(edited).toEqual({ path: tree.path("code.ts"), digest: sha256(after), size: after.length, replacements: 1 })
    expect(tree.read("code.ts")).toBe(after)
  })

  it("refuses text that is absent or ambiguous, unless replace_all", async () => {
    const text = "x\nx\n"
    tree.write("twice.txt", text)
    const edit = (input: Record<string, unknown>) =>
      tree.tool("edit_file", { path: "twice.txt", expected_digest: sha256(text), ...input })
    expect(failureOf(await edit({ old_text: "y", new_text: "z" })).code).toBe("unprocessable")
    const ambiguous = failureOf(await edit({ old_text: "x", new_text: "z" }))
    expect(ambiguous.code).toBe("unprocessable")
    expect(ambiguous.message).toContain("2 times")
    expect(outputOf(await edit({ old_text: "x", new_text: "z", replace_all: true })).replacements).toBe(2)
    expect(tree.read("twice.txt")).toBe("z\nz\n")
  })

  it("refuses a binary file, a read-only file and an escape", async () => {
    const binary = Buffer.from([0x61, 0x00, 0x62])
    tree.write("data.bin", binary)
    expect(failureOf(await tree.tool("edit_file", { path: "data.bin", old_text: "a", new_text: "b", expected_digest: sha256(binary) })).code)
      .toBe("unprocessable")
    tree.write("locked.txt", "a")
    chmodSync(tree.path("locked.txt"), 0o400)
    expect(failureOf(await tree.tool("edit_file", { path: "locked.txt", old_text: "a", new_text: "b", expected_digest: sha256("a") })).code)
      .toBe("file_read_only")
    tree.link("out-file", `${tree.outside}/secret.txt`)
    expect(failureOf(await tree.tool("edit_file", { path: "out-file", old_text: "secret", new_text: "x" })).code).toBe("forbidden")
  })

  it(`refuses an edit whose file would exceed ${EDIT_MAX_BYTES} bytes before building it`, async () => {
    const editAll = (content: string, new_text: string) => {
      tree.write("many.txt", content)
      return tree.tool("edit_file", { path: "many.txt", old_text: "a", new_text, replace_all: true, expected_digest: sha256(content) })
    }
    const text = "a".repeat(EDIT_MAX_BYTES)
    const peakBefore = process.resourceUsage().maxRSS
    const failure = failureOf(await editAll(text, "b".repeat(120)))
    // The process's peak resident memory, in KiB: building the refused file had taken 1.1 GB.
    expect(process.resourceUsage().maxRSS - peakBefore).toBeLessThan(256 * 1024)
    expect(failure).toEqual({
      code: "request_too_large",
      message: `the edited file would be ${EDIT_MAX_BYTES * 120} bytes; edit_file writes at most ${EDIT_MAX_BYTES}`
    })
    expect(tree.read("many.txt")).toBe(text)
    // Counted in bytes of UTF-8: "é" is two.
    expect(failureOf(await editAll("a".repeat(EDIT_MAX_BYTES / 2 + 1), "é")).message)
      .toBe(`the edited file would be ${EDIT_MAX_BYTES + 2} bytes; edit_file writes at most ${EDIT_MAX_BYTES}`)
    expect(outputOf(await editAll("a".repeat(EDIT_MAX_BYTES / 2), "é"))).toMatchObject({ size: EDIT_MAX_BYTES, replacements: EDIT_MAX_BYTES / 2 })
  })

  it("takes an unpaired surrogate in old_text as U+FFFD, as UTF-8 writes it: never half of a character", async () => {
    const text = "😀 \uFFFD\n"
    tree.write("emoji.txt", text)
    const edited = outputOf(await tree.tool("edit_file", { path: "emoji.txt", old_text: "\uD83D", new_text: "x", expected_digest: sha256(text) }))
    expect(tree.read("emoji.txt")).toBe("😀 x\n")
    expect(edited).toMatchObject({ size: Buffer.byteLength("😀 x\n"), replacements: 1 })
  })

  it("lets one of concurrent edits and writes expecting the same digest through, the others conflict", async () => {
    tree.write("shared.txt", "start\n")
    const expected_digest = sha256("start\n")
    const contents = Array.from({ length: CONCURRENT_WRITES }, (_, n) => `edit ${n}\n`)
    const outcomes = await tree.runAll(contents.map((content, n) =>
      n % 2 === 0
        ? tree.toolOperation("edit_file", { path: "shared.txt", old_text: "start\n", new_text: content, expected_digest })
        : tree.toolOperation("write_file", { path: "shared.txt", content, expected_digest })
    ))
    const { failures, winner } = oneWinner(outcomes)
    expect(tree.read("shared.txt")).toBe(contents[winner])
    expect(failures).toHaveLength(CONCURRENT_WRITES - 1)
    for (const failure of failures) expect(failure).toMatchObject({ code: "file_content_conflict", current_digest: sha256(contents[winner]!) })
  })
})

describe("git directories", () => {
  it("are written by no file operation: a repository's .git, a worktree's .git file and its git directory, through a link too", async () => {
    const config = "[core]\n\tbare = false\n"
    tree.write(".git/config", config)
    tree.write(".git/worktrees/work/config", config)
    tree.write("work/.git", `gitdir: ${tree.path(".git/worktrees/work")}\n`)
    tree.link("settings", tree.path(".git"))
    const fsmonitor = "[core]\n\tfsmonitor = \"touch marker\"\n"
    for (const path of [".git/config", ".git/hooks/post-checkout", ".git/worktrees/work/config", "work/.git", "settings/config", ".GIT/config"]) {
      const written = failureOf(await tree.tool("write_file", { path, content: fsmonitor }))
      expect(written).toMatchObject({ code: "forbidden", message: expect.stringContaining("lies in a git directory (.git)") })
      const route = failureOf(await tree.run({ operation: "file.write", path: tree.path(path), content: fsmonitor, encoding: "utf-8" }))
      expect(route.code).toBe("forbidden")
    }
    for (const path of [".git/config", ".git/worktrees/work/config", "settings/config"]) {
      const edited = failureOf(await tree.tool("edit_file", { path, old_text: "bare = false", new_text: "fsmonitor = \"touch marker\"", expected_digest: sha256(config) }))
      expect(edited).toMatchObject({ code: "forbidden", message: expect.stringContaining("lies in a git directory (.git)") })
    }
    expect(tree.read(".git/config")).toBe(config)
    expect(tree.read(".git/worktrees/work/config")).toBe(config)
    expect(existsSync(tree.path(".git/hooks"))).toBe(false)
    // Names that only start like it are files like any other.
    for (const path of [".gitignore", ".github/workflows/ci.yml", "work/.gitattributes"]) {
      expect(outputOf(await tree.tool("write_file", { path, content: "x\n" })).created).toBe(true)
    }
  })
})

describe("file.read and file.write (the files route)", () => {
  it("reads text as utf-8 and anything else as base64, with read_only", async () => {
    tree.write("a.txt", "text ✓\n")
    expect(outputOf(await tree.run({ operation: "file.read", path: tree.path("a.txt") }))).toEqual({
      path: tree.path("a.txt"),
      digest: sha256("text ✓\n"),
      size: Buffer.byteLength("text ✓\n"),
      encoding: "utf-8",
      content: "text ✓\n",
      read_only: false
    })
    const bytes = Buffer.from([0xff, 0x00, 0x10])
    tree.write("b.bin", bytes)
    chmodSync(tree.path("b.bin"), 0o444)
    expect(outputOf(await tree.run({ operation: "file.read", path: tree.path("b.bin") }))).toMatchObject({
      encoding: "base64",
      content: bytes.toString("base64"),
      digest: sha256(bytes),
      read_only: true
    })
  })

  it("refuses relative paths, directories and files over the cap", async () => {
    tree.write("a.txt", "x")
    expect(failureOf(await tree.run({ operation: "file.read", path: "a.txt" })).code).toBe("invalid_request")
    expect(failureOf(await tree.run({ operation: "file.read", path: tree.root })).code).toBe("not_a_file")
    tree.write("huge.bin", "")
    truncateSync(tree.path("huge.bin"), FILE_TRANSFER_MAX_BYTES + 1)
    expect(failureOf(await tree.run({ operation: "file.read", path: tree.path("huge.bin") })).code).toBe("unprocessable")
  })

  it("writes base64 or text content under the digest precondition", async () => {
    const bytes = Buffer.from([0x00, 0x01, 0x02])
    const write = (content: string, encoding: "utf-8" | "base64", expected_digest?: string) =>
      tree.run({ operation: "file.write", path: tree.path("f.bin"), content, encoding, ...(expected_digest ? { expected_digest } : {}) })
    expect(outputOf(await write(bytes.toString("base64"), "base64"))).toEqual({
      path: tree.path("f.bin"),
      digest: sha256(bytes),
      size: 3,
      created: true
    })
    expect(failureOf(await write("text", "utf-8"))).toMatchObject({ code: "expected_digest_required", current_digest: sha256(bytes) })
    expect(outputOf(await write("text", "utf-8", sha256(bytes))).digest).toBe(sha256("text"))
    expect(failureOf(await write("not base64!", "base64", sha256("text"))).code).toBe("invalid_request")
    expect(tree.read("f.bin")).toBe("text")
  })

  it("applies concurrent writes to one path one at a time: one creates the file, one replaces it, the others see its content", async () => {
    const path = tree.path("new.txt")
    const write = (content: string, expected_digest?: string): Operation =>
      ({ operation: "file.write", path, content, encoding: "utf-8", ...(expected_digest ? { expected_digest } : {}) })
    const contents = Array.from({ length: CONCURRENT_WRITES }, (_, n) => `w${n}`)

    const creations = oneWinner(await tree.runAll(contents.map((content) => write(content))))
    const created = contents[creations.winner]!
    expect(tree.read("new.txt")).toBe(created)
    expect(creations.failures).toHaveLength(CONCURRENT_WRITES - 1)
    for (const failure of creations.failures) expect(failure).toMatchObject({ code: "expected_digest_required", current_digest: sha256(created) })

    const replacements = oneWinner(await tree.runAll(contents.map((content) => write(`${content} again`, sha256(created)))))
    const replaced = `${contents[replacements.winner]} again`
    expect(tree.read("new.txt")).toBe(replaced)
    expect(replacements.failures).toHaveLength(CONCURRENT_WRITES - 1)
    for (const failure of replacements.failures) expect(failure).toMatchObject({ code: "file_content_conflict", current_digest: sha256(replaced) })
  })
})
