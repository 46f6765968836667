/**
 * The built-in tools that run on a machine: their names, what the model is told about them, the
 * input it sends (decoded by the daemon, turned into the model-facing JSON Schema with
 * `Schema.toJsonSchemaDocument`) and the output the daemon answers with. Paths are absolute, or
 * relative to the request's `cwd`; every path must lie inside one of the machine's directories.
 */
import { Schema } from "effect"
import { NonNegativeInt } from "../shared/NonNegativeInt.ts"
import { optional } from "../shared/Optional.ts"
import { FileDigest } from "./MachineFiles.ts"

/** The most text one `read_file` call returns (bytes of UTF-8). */
export const READ_MAX_BYTES = 256 * 1024
/** Lines one `read_file` call returns when the model gives no `limit`, and the largest `limit`. */
export const READ_DEFAULT_LINES = 2000
export const READ_MAX_LINES = 20_000
/** Entries one `list_files` call returns. */
export const LIST_MAX_ENTRIES = 1000
/** Matches one `search_files` call returns, files it opens, the largest file it searches, and the text kept of a matching line. */
export const SEARCH_MAX_MATCHES = 200
export const SEARCH_MAX_FILES = 5000
export const SEARCH_MAX_FILE_BYTES = 1024 * 1024
export const SEARCH_MAX_LINE_CHARS = 300
/** The largest content `write_file` writes and the largest file `edit_file` edits (bytes of UTF-8). */
export const EDIT_MAX_BYTES = 4 * 1024 * 1024
/** Output kept of one command (stdout and stderr together), and its timeouts in seconds. */
export const COMMAND_OUTPUT_MAX_BYTES = 64 * 1024
export const COMMAND_DEFAULT_TIMEOUT_SECONDS = 120
export const COMMAND_MAX_TIMEOUT_SECONDS = 3600
/** Directories `list_files` (recursive) and `search_files` do not descend into. */
export const SKIPPED_DIRECTORIES: ReadonlyArray<string> = [".git", "node_modules"]

const KiB = (bytes: number) => `${bytes / 1024} KiB`

const Count = (minimum: number, maximum: number, description: string) =>
  Schema.Number.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isBetween({ minimum: minimum, maximum: maximum }))).annotate({ description })
const Path = (description: string) => Schema.String.pipe(Schema.check(Schema.isMinLength(1))).annotate({ description })
const Digest = (description: string) => FileDigest.annotate({ description })

export const ReadFileInput = Schema.Struct({
  path: Path("Path of the file"),
  offset: optional(Count(1, Number.MAX_SAFE_INTEGER, "Line number to start at (1 is the first line)")),
  limit: optional(Count(1, READ_MAX_LINES, `How many lines to read (default ${READ_DEFAULT_LINES})`))
})
export type ReadFileInput = typeof ReadFileInput.Type
export const ReadFileOutput = Schema.Struct({
  path: Schema.String,
  digest: FileDigest,
  size: NonNegativeInt,
  /** `binary` when the file is not UTF-8 text; its content is then not returned. */
  encoding: Schema.Literals(["utf-8", "binary"]),
  content: Schema.String,
  start_line: NonNegativeInt,
  end_line: NonNegativeInt,
  total_lines: NonNegativeInt,
  /** More lines follow: read again from `next_offset`. */
  truncated: Schema.Boolean,
  next_offset: optional(NonNegativeInt)
})
export type ReadFileOutput = typeof ReadFileOutput.Type

export const ListFilesInput = Schema.Struct({
  path: Path("Path of the directory"),
  recursive: optional(Schema.Boolean.annotate({ description: "Also list the contents of subdirectories" }))
})
export type ListFilesInput = typeof ListFilesInput.Type
export const FileEntry = Schema.Struct({
  /** Relative to the listed directory. */
  path: Schema.String,
  type: Schema.Literals(["file", "directory", "symlink", "other"]),
  size: optional(NonNegativeInt)
})
export type FileEntry = typeof FileEntry.Type
export const ListFilesOutput = Schema.Struct({
  path: Schema.String,
  entries: Schema.Array(FileEntry),
  truncated: Schema.Boolean
})
export type ListFilesOutput = typeof ListFilesOutput.Type

export const SearchFilesInput = Schema.Struct({
  pattern: Schema.String.pipe(Schema.check(Schema.isMinLength(1))).annotate({
    description: "Regular expression (JavaScript syntax) to find in lines; text that is not a valid expression is searched literally"
  }),
  path: optional(Path("Directory (or file) to search; the working directory by default")),
  case_insensitive: optional(Schema.Boolean.annotate({ description: "Ignore letter case" }))
})
export type SearchFilesInput = typeof SearchFilesInput.Type
export const SearchMatch = Schema.Struct({
  /** Relative to the searched directory. */
  path: Schema.String,
  line: NonNegativeInt,
  text: Schema.String
})
export type SearchMatch = typeof SearchMatch.Type
export const SearchFilesOutput = Schema.Struct({
  path: Schema.String,
  matches: Schema.Array(SearchMatch),
  files_searched: NonNegativeInt,
  /** Files not searched: binary, or larger than the search reads. */
  files_skipped: NonNegativeInt,
  /** The search stopped at a cap before the end. */
  truncated: Schema.Boolean
})
export type SearchFilesOutput = typeof SearchFilesOutput.Type

export const WriteFileInput = Schema.Struct({
  path: Path("Path of the file; missing parent directories are created"),
  content: Schema.String.annotate({ description: "The whole new content" }),
  expected_digest: optional(
    Digest("Digest of the file as last read (read_file gives it); required when the file exists")
  )
})
export type WriteFileInput = typeof WriteFileInput.Type
export const WriteFileOutput = Schema.Struct({
  path: Schema.String,
  digest: FileDigest,
  size: NonNegativeInt,
  created: Schema.Boolean
})
export type WriteFileOutput = typeof WriteFileOutput.Type

export const EditFileInput = Schema.Struct({
  path: Path("Path of the file"),
  old_text: Schema.String.pipe(Schema.check(Schema.isMinLength(1))).annotate({
    description: "Exact text to replace; it must occur once unless replace_all is true"
  }),
  new_text: Schema.String.annotate({ description: "Replacement" }),
  replace_all: optional(Schema.Boolean.annotate({ description: "Replace every occurrence" })),
  expected_digest: optional(Digest("Digest of the file as last read (read_file gives it); required"))
})
export type EditFileInput = typeof EditFileInput.Type
export const EditFileOutput = Schema.Struct({
  path: Schema.String,
  digest: FileDigest,
  size: NonNegativeInt,
  replacements: NonNegativeInt
})
export type EditFileOutput = typeof EditFileOutput.Type

export const RunCommandInput = Schema.Struct({
  command: Schema.String.pipe(Schema.check(Schema.isMinLength(1))).annotate({ description: "Shell command to run (/bin/sh -c)" }),
  timeout_seconds: optional(
    Count(1, COMMAND_MAX_TIMEOUT_SECONDS, `Seconds before the command is killed (default ${COMMAND_DEFAULT_TIMEOUT_SECONDS})`)
  )
})
export type RunCommandInput = typeof RunCommandInput.Type
/**
 * stdout and stderr hold at most COMMAND_OUTPUT_MAX_BYTES characters together: the daemon keeps that
 * many bytes, and decoding bytes never makes more characters (an invalid byte is one U+FFFD).
 */
export const RunCommandOutput = Schema.Struct({
  /** Null when the shell was ended by a signal (a timeout or a cancel). */
  exit_code: Schema.NullOr(Schema.Number.pipe(Schema.check(Schema.isInt()))),
  stdout: Schema.String,
  stderr: Schema.String,
  output_truncated: Schema.Boolean,
  timed_out: Schema.Boolean,
  duration_ms: NonNegativeInt
}).pipe(Schema.check(Schema.makeFilter((output) =>
  output.stdout.length + output.stderr.length <= COMMAND_OUTPUT_MAX_BYTES ||
  `stdout and stderr hold ${output.stdout.length + output.stderr.length} characters together; a command's output is cut at ${COMMAND_OUTPUT_MAX_BYTES}`
)))
export type RunCommandOutput = typeof RunCommandOutput.Type

export const MachineToolName = Schema.Literals([
  "read_file",
  "list_files",
  "search_files",
  "write_file",
  "edit_file",
  "run_command"
])
export type MachineToolName = typeof MachineToolName.Type

/** One built-in machine tool: what the model is told, the input it sends, the output it gets back. */
const tool = <I extends Schema.Top, O extends Schema.Top>(description: string, input: I, output: O) => ({
  description,
  input,
  output
})

export const MACHINE_TOOLS = {
  read_file: tool(
    `Read a text file on the machine, by lines, at most ${KiB(READ_MAX_BYTES)} per call; gives the file's digest for write_file and edit_file`,
    ReadFileInput,
    ReadFileOutput
  ),
  list_files: tool(
    `List the files of a directory on the machine (at most ${LIST_MAX_ENTRIES} entries)`,
    ListFilesInput,
    ListFilesOutput
  ),
  search_files: tool(
    `Search file contents on the machine (at most ${SEARCH_MAX_MATCHES} matching lines; skips ${SKIPPED_DIRECTORIES.join(" and ")})`,
    SearchFilesInput,
    SearchFilesOutput
  ),
  write_file: tool(
    "Create or replace a file on the machine; replacing needs the digest read_file gave",
    WriteFileInput,
    WriteFileOutput
  ),
  edit_file: tool(
    "Replace text in a file on the machine; needs the digest read_file gave",
    EditFileInput,
    EditFileOutput
  ),
  run_command: tool(
    `Run a shell command on the machine; gives its exit code and output (at most ${KiB(COMMAND_OUTPUT_MAX_BYTES)})`,
    RunCommandInput,
    RunCommandOutput
  )
} as const satisfies Record<MachineToolName, unknown>

export type MachineToolInput<T extends MachineToolName> = (typeof MACHINE_TOOLS)[T]["input"]["Type"]
export type MachineToolOutput<T extends MachineToolName> = (typeof MACHINE_TOOLS)[T]["output"]["Type"]
