/**
 * The reading tools on a real directory tree: read_file's line window, caps, digest and binary
 * detection; list_files and search_files with their caps; paths that escape the machine's
 * directory through `..` or a symlink are refused before anything is read, with one answer whether
 * what lies outside exists or not.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import * as nodePath from "node:path"
import {
  LIST_MAX_ENTRIES,
  READ_DEFAULT_LINES,
  READ_MAX_BYTES,
  SEARCH_MAX_MATCHES
} from "../../src/domain/machines/MachineTools.ts"
import { failureOf, makeTree, outputOf, sha256, type Tree } from "./Fixtures.ts"

let tree: Tree
beforeEach(() => {
  tree = makeTree()
})
afterEach(() => tree.remove())

const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join("\n") + "\n"

describe("read_file", () => {
  it("reads a text file with its digest, size and line count, relative to the cwd or absolute", async () => {
    const text = "héllo\nworld\nlast line without newline"
    tree.write("src/a.txt", text)
    const relative = outputOf(await tree.tool("read_file", { path: "a.txt" }, { cwd: tree.path("src") }))
    expect(relative).toEqual({
      path: tree.path("src/a.txt"),
      digest: sha256(text),
      size: Buffer.byteLength(text),
      encoding: "utf-8",
      content: text,
      start_line: 1,
      end_line: 3,
      total_lines: 3,
      truncated: false
    })
    expect(outputOf(await tree.tool("read_file", { path: tree.path("src/a.txt") }))).toEqual(relative)
  })

  it("reads a window of lines with offset and limit, and says where the next one starts", async () => {
    tree.write("many.txt", lines(10))
    const window = outputOf(await tree.tool("read_file", { path: "many.txt", offset: 3, limit: 4 }))
    expect(window.content).toBe("line 3\nline 4\nline 5\nline 6\n")
    expect(window).toMatchObject({ start_line: 3, end_line: 6, total_lines: 10, truncated: true, next_offset: 7 })
    const end = outputOf(await tree.tool("read_file", { path: "many.txt", offset: 9 }))
    expect(end).toMatchObject({ content: "line 9\nline 10\n", end_line: 10, truncated: false })
    expect(end.next_offset).toBeUndefined()
    const past = outputOf(await tree.tool("read_file", { path: "many.txt", offset: 50 }))
    expect(past).toMatchObject({ content: "", start_line: 50, end_line: 49, total_lines: 10, truncated: false })
  })

  it(`returns at most ${READ_DEFAULT_LINES} lines by default and at most ${READ_MAX_BYTES} bytes of text`, async () => {
    tree.write("long.txt", lines(READ_DEFAULT_LINES + 5))
    expect(outputOf(await tree.tool("read_file", { path: "long.txt" }))).toMatchObject({
      end_line: READ_DEFAULT_LINES,
      truncated: true,
      next_offset: READ_DEFAULT_LINES + 1
    })
    const wide = Array.from({ length: 600 }, (_, i) => `${i}`.padEnd(999, "x")).join("\n") + "\n"
    tree.write("wide.txt", wide)
    const capped = outputOf(await tree.tool("read_file", { path: "wide.txt" }))
    expect(Buffer.byteLength(capped.content)).toBeLessThanOrEqual(READ_MAX_BYTES)
    expect(capped.end_line).toBe(Math.floor(READ_MAX_BYTES / 1000))
    expect(capped).toMatchObject({ total_lines: 600, truncated: true, next_offset: capped.end_line + 1, digest: sha256(wide) })
    const next = outputOf(await tree.tool("read_file", { path: "wide.txt", offset: capped.next_offset }))
    expect(next.content.startsWith(`${capped.end_line}x`)).toBe(true)
  })

  it("cuts a single line longer than the cap, on a character boundary", async () => {
    const line = "é".repeat(READ_MAX_BYTES)
    tree.write("one-line.txt", line)
    const output = outputOf(await tree.tool("read_file", { path: "one-line.txt" }))
    expect(output.content).toBe("é".repeat(READ_MAX_BYTES / 2))
    expect(output).toMatchObject({ end_line: 1, total_lines: 1, truncated: true, size: READ_MAX_BYTES * 2 })
  })

  it("reports a binary file (NUL byte or invalid UTF-8) without its content", async () => {
    const withNul = Buffer.from([0x68, 0x69, 0x00, 0x01])
    tree.write("nul.bin", withNul)
    expect(outputOf(await tree.tool("read_file", { path: "nul.bin" }))).toMatchObject({
      encoding: "binary",
      content: "",
      size: 4,
      digest: sha256(withNul)
    })
    tree.write("latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
    expect(outputOf(await tree.tool("read_file", { path: "latin1.txt" }))).toMatchObject({ encoding: "binary", content: "" })
  })

  it("answers not_found, not_a_file and invalid_request", async () => {
    expect(failureOf(await tree.tool("read_file", { path: "missing.txt" })).code).toBe("not_found")
    mkdirSync(tree.path("dir"))
    expect(failureOf(await tree.tool("read_file", { path: "dir" })).code).toBe("not_a_file")
    const invalid = failureOf(await tree.tool("read_file", { limit: 0 }))
    expect(invalid.code).toBe("invalid_request")
    expect(invalid.message).toContain("path: Missing key")
    expect(invalid.message).toContain("limit: Expected a value between 1 and 20000")
  })
})

describe("paths that escape the machine's directories", () => {
  it("are refused through .. and absolute paths", async () => {
    for (const path of ["../outside/secret.txt", `${tree.outside}/secret.txt`, "sub/../../outside/secret.txt"]) {
      const failure = failureOf(await tree.tool("read_file", { path }))
      expect(failure.code).toBe("forbidden")
      expect(failure.message).toContain(tree.root)
    }
    expect(failureOf(await tree.tool("list_files", { path: ".." })).code).toBe("forbidden")
    expect(failureOf(await tree.tool("search_files", { pattern: "secret", path: tree.outside })).code).toBe("forbidden")
    expect(failureOf(await tree.tool("read_file", { path: "secret.txt" }, { cwd: tree.outside })).code).toBe("forbidden")
  })

  it("are refused through a symlink to a file or a directory outside, and allowed through one inside", async () => {
    tree.link("out-dir", tree.outside)
    tree.link("out-file", `${tree.outside}/secret.txt`)
    tree.write("in/real.txt", "inside\n")
    tree.link("in-link", tree.path("in"))
    expect(failureOf(await tree.tool("read_file", { path: "out-dir/secret.txt" })).code).toBe("forbidden")
    expect(failureOf(await tree.tool("read_file", { path: "out-file" })).code).toBe("forbidden")
    expect(failureOf(await tree.tool("list_files", { path: "out-dir" })).code).toBe("forbidden")
    expect(failureOf(await tree.tool("read_file", { path: "x.txt" }, { cwd: tree.path("out-dir") })).code).toBe("forbidden")
    expect(failureOf(await tree.run({ operation: "file.read", path: tree.path("out-file") })).code).toBe("forbidden")
    const inside = outputOf(await tree.tool("read_file", { path: "in-link/real.txt" }))
    expect(inside).toMatchObject({ path: tree.path("in/real.txt"), content: "inside\n" })
  })

  it("are followed name by name as the kernel does: relative targets with .., links to links, a loop", async () => {
    tree.write("a/b/deep.txt", "deep\n")
    tree.write("top.txt", "top\n")
    // A relative target is read from the link's directory, its .. taken physically: a/b/up is a/b/../../top.txt,
    // and a link to that link is followed on.
    tree.link("a/b/up", "../../top.txt")
    tree.link("chain", "a/b/up")
    expect(outputOf(await tree.tool("read_file", { path: "chain" }))).toMatchObject({ path: tree.path("top.txt"), content: "top\n" })
    // A link to a directory on the way, relative to its own directory.
    tree.link("a/to-b", "b")
    expect(outputOf(await tree.tool("read_file", { path: "a/to-b/deep.txt" }))).toMatchObject({ path: tree.path("a/b/deep.txt") })
    // Out through .. in a relative target: refused as any path outside, whether its target exists or not.
    tree.link("a/b/escape", "../../../outside/secret.txt")
    tree.link("a/b/escape-missing", "../../../outside/none.txt")
    for (const path of ["a/b/escape", "a/b/escape-missing"]) {
      expect(failureOf(await tree.tool("read_file", { path }))).toEqual({
        code: "forbidden",
        message: `${tree.path(path)} lies outside the machine's directories (${tree.root})`
      })
    }
    // A link to a directory above the machine's (walked through on the way in): outside, to list or to write in.
    tree.link("up", nodePath.dirname(tree.root))
    expect(failureOf(await tree.tool("list_files", { path: "up" })).code).toBe("forbidden")
    expect(failureOf(await tree.tool("read_file", { path: "up/outside/secret.txt" })).code).toBe("forbidden")
    expect(failureOf(await tree.tool("write_file", { path: "up/new.txt", content: "x" })).code).toBe("forbidden")
    // Two links naming each other: the kernel's ELOOP, not a hang.
    tree.link("loop-1", "loop-2")
    tree.link("loop-2", "loop-1")
    expect(failureOf(await tree.tool("read_file", { path: "loop-1" })).code).toBe("unprocessable")
  })

  it("get one answer whether what lies outside exists or not, in every operation that takes a path", async () => {
    tree.link("to-secret", `${tree.outside}/secret.txt`)
    tree.link("to-missing", `${tree.outside}/missing.txt`)
    tree.link("to-outside", tree.outside)
    const refusedAlike = (path: string) => `${path} lies outside the machine's directories (${tree.root})`
    for (const [given, named] of [
      [`${tree.outside}/secret.txt`, `${tree.outside}/secret.txt`],
      [`${tree.outside}/missing.txt`, `${tree.outside}/missing.txt`],
      [`${tree.outside}/missing/deeper.txt`, `${tree.outside}/missing/deeper.txt`],
      [`${tree.outside}/secret.txt/under-a-file`, `${tree.outside}/secret.txt/under-a-file`],
      ["to-secret", tree.path("to-secret")],
      ["to-missing", tree.path("to-missing")],
      ["to-outside/missing.txt", tree.path("to-outside/missing.txt")],
      ["to-outside/secret.txt/under-a-file", tree.path("to-outside/secret.txt/under-a-file")]
    ]) {
      const outcomes = [
        await tree.tool("read_file", { path: given }),
        await tree.tool("list_files", { path: given }),
        await tree.tool("search_files", { pattern: "secret", path: given }),
        await tree.tool("write_file", { path: given, content: "x" }),
        await tree.tool("edit_file", { path: given, old_text: "a", new_text: "b", expected_digest: sha256("") }),
        await tree.tool("list_files", { path: "." }, { cwd: named }),
        await tree.tool("run_command", { command: "true" }, { cwd: named }),
        await tree.run({ operation: "file.read", path: named }),
        await tree.run({ operation: "file.write", path: named, content: "x", encoding: "utf-8" }),
        await tree.run({ operation: "checkpoint.create", path: named })
      ]
      for (const outcome of outcomes) expect(failureOf(outcome)).toEqual({ code: "forbidden", message: refusedAlike(named) })
    }
    expect(tree.read("../outside/secret.txt")).toBe("the secret\n")
    expect(existsSync(`${tree.outside}/missing.txt`)).toBe(false)
  })

  it("are never followed by list_files or search_files walking the tree", async () => {
    tree.link("out-dir", tree.outside)
    tree.write("notes.txt", "no secret here\n")
    const listing = outputOf(await tree.tool("list_files", { path: ".", recursive: true }))
    expect(listing.entries).toEqual([
      { path: "notes.txt", type: "file", size: 15 },
      { path: "out-dir", type: "symlink" }
    ])
    const search = outputOf(await tree.tool("search_files", { pattern: "secret" }))
    expect(search.matches).toEqual([{ path: "notes.txt", line: 1, text: "no secret here" }])
  })
})

describe("list_files", () => {
  it("lists a directory, or its tree without descending into .git and node_modules", async () => {
    tree.write("b.txt", "bb")
    tree.write("a/one.txt", "1")
    tree.write("a/deeper/two.txt", "22")
    tree.write(".git/HEAD", "ref")
    tree.write("node_modules/x/index.js", "")
    const flat = outputOf(await tree.tool("list_files", { path: tree.root }))
    expect(flat).toEqual({
      path: tree.root,
      entries: [
        { path: ".git", type: "directory" },
        { path: "a", type: "directory" },
        { path: "b.txt", type: "file", size: 2 },
        { path: "node_modules", type: "directory" }
      ],
      truncated: false
    })
    const deep = outputOf(await tree.tool("list_files", { path: ".", recursive: true }))
    expect(deep.entries.map((entry: { path: string }) => entry.path)).toEqual([
      ".git",
      "a",
      "b.txt",
      "node_modules",
      "a/deeper",
      "a/one.txt",
      "a/deeper/two.txt"
    ])
    expect(failureOf(await tree.tool("list_files", { path: "b.txt" })).code).toBe("unprocessable")
  })

  it(`stops at ${LIST_MAX_ENTRIES} entries`, async () => {
    mkdirSync(tree.path("many"))
    for (let i = 0; i <= LIST_MAX_ENTRIES; i++) writeFileSync(tree.path("many", `f${String(i).padStart(4, "0")}`), "")
    const listing = outputOf(await tree.tool("list_files", { path: "many" }))
    expect(listing.entries).toHaveLength(LIST_MAX_ENTRIES)
    expect(listing.truncated).toBe(true)
  })
})

describe("search_files", () => {
  it("finds lines by regular expression, literally when the pattern is not one, ignoring case on request", async () => {
    tree.write("src/a.ts", "const foo = 1\nfoo(bar)\nFOO\n")
    tree.write("src/b.ts", "nothing\n")
    tree.write("data.bin", Buffer.from([0x66, 0x6f, 0x6f, 0x00]))
    const regex = outputOf(await tree.tool("search_files", { pattern: "^foo\\(" }))
    expect(regex).toEqual({
      path: tree.root,
      matches: [{ path: "src/a.ts", line: 2, text: "foo(bar)" }],
      files_searched: 2,
      files_skipped: 1,
      truncated: false
    })
    const literal = outputOf(await tree.tool("search_files", { pattern: "foo(", path: "src" }))
    expect(literal.matches).toEqual([{ path: "a.ts", line: 2, text: "foo(bar)" }])
    const anyCase = outputOf(await tree.tool("search_files", { pattern: "foo", path: "src/a.ts", case_insensitive: true }))
    expect(anyCase.matches.map((match: { line: number }) => match.line)).toEqual([1, 2, 3])
  })

  it(`stops at ${SEARCH_MAX_MATCHES} matches`, async () => {
    tree.write("hits.txt", "hit\n".repeat(SEARCH_MAX_MATCHES + 1))
    const search = outputOf(await tree.tool("search_files", { pattern: "hit" }))
    expect(search.matches).toHaveLength(SEARCH_MAX_MATCHES)
    expect(search.truncated).toBe(true)
    tree.write("hits.txt", "hit\n".repeat(SEARCH_MAX_MATCHES))
    expect(outputOf(await tree.tool("search_files", { pattern: "hit" })).truncated).toBe(false)
  })
})

describe("a FIFO", () => {
  it("is refused by every operation that reads a file, without waiting for a writer: the daemon's file operations go on", async () => {
    // Five searches, one more than libuv's four threadpool threads: an open that waits for a
    // writer holds one, and with all four held no file operation of the process answers.
    const fifos = Array.from({ length: 5 }, (_, n) => `pipe${n}`)
    for (const name of fifos) execFileSync("mkfifo", [tree.path(name)])
    const fifo = tree.path(fifos[0]!)
    const outcomes = await tree.runAll([
      ...fifos.map((name) => tree.toolOperation("search_files", { pattern: "x", path: name })),
      tree.toolOperation("read_file", { path: fifo }),
      tree.toolOperation("edit_file", { path: fifo, old_text: "a", new_text: "b", expected_digest: sha256("") }),
      tree.toolOperation("write_file", { path: fifo, content: "x", expected_digest: sha256("") }),
      { operation: "file.read", path: fifo },
      { operation: "file.write", path: fifo, content: "x", encoding: "utf-8", expected_digest: sha256("") }
    ])
    expect(outcomes.slice(0, fifos.length).map(failureOf)).toEqual(fifos.map((name) => ({
      code: "not_a_file",
      message: `${tree.path(name)} is neither a directory nor a regular file: search_files searches the files under a directory, or one file`
    })))
    for (const outcome of outcomes.slice(fifos.length)) expect(failureOf(outcome).code).toBe("not_a_file")
    tree.write("notes.txt", "x marks the spot\n")
    expect(outputOf(await tree.tool("search_files", { pattern: "x" }))).toEqual({
      path: tree.root,
      matches: [{ path: "notes.txt", line: 1, text: "x marks the spot" }],
      files_searched: 1,
      files_skipped: 0,
      truncated: false
    })
    expect(outputOf(await tree.tool("read_file", { path: "notes.txt" })).content).toBe("x marks the spot\n")
  })
})

describe("the request's working directory", () => {
  it("defaults to the machine's first directory, is relative to it when relative, and must be a directory inside it", async () => {
    tree.write("top.txt", "top\n")
    const outcome = await tree.run({ operation: "tool", tool_call_id: "tcl_x", tool: "read_file", input: { path: "top.txt" }, cwd: null, env: {}, unset_env: [] })
    expect(outputOf(outcome).content).toBe("top\n")
    tree.write("nested/deeper/here.txt", "here\n")
    expect(outputOf(await tree.tool("read_file", { path: "here.txt" }, { cwd: "nested/deeper" })).content).toBe("here\n")
    expect(failureOf(await tree.tool("read_file", { path: "x" }, { cwd: tree.path("top.txt") })).code).toBe("invalid_request")
    expect(failureOf(await tree.tool("read_file", { path: "top.txt" }, { cwd: "../.." })).code).toBe("forbidden")
    symlinkSync(tree.outside, tree.path("escape"))
    expect(failureOf(await tree.tool("list_files", { path: "." }, { cwd: tree.path("escape") })).code).toBe("forbidden")
  })
})
