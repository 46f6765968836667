/**
 * The machine schemas as both sides will use them: the model-facing JSON Schemas of the tools
 * (compatible with the inputs offered before), requests and results on the wire, and the
 * registration body with the metadata limits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  DaemonMessageJson,
  outputSchemaOf,
  RequestEnvelope,
  ServerMessageJson
} from "../../src/domain/machines/DaemonProtocol.ts"
import { MachineDescriptor } from "../../src/domain/machines/Machine.ts"
import { MACHINE_TOOLS, MachineToolName } from "../../src/domain/machines/MachineTools.ts"
import { RegisterMachineRequest } from "../../src/domain/machines/Registration.ts"

const decodeServer = Schema.decodeUnknownResult(ServerMessageJson)

describe("the tools' JSON Schemas", () => {
  it("are made from the input schemas, with descriptions and the fields required before", () => {
    const required: Record<string, Array<string>> = {
      read_file: ["path"],
      list_files: ["path"],
      search_files: ["pattern"],
      write_file: ["path", "content"],
      edit_file: ["path", "old_text", "new_text"],
      run_command: ["command"]
    }
    expect([...MachineToolName.literals].sort()).toEqual(Object.keys(required).sort())
    for (const name of MachineToolName.literals) {
      // Self-contained, as JSONSchema.make gave it in Effect 3: no schema moved into `$defs` by its identifier
      // (a recursive one still would be, and fail the `$ref` check below).
      const document = Schema.toJsonSchemaDocument(MACHINE_TOOLS[name].input, { referencePolicy: () => undefined })
      const schema = document.schema as {
        type: string
        required: Array<string>
        properties: Record<string, { description?: string }>
        additionalProperties: boolean
      }
      expect(schema.type).toBe("object")
      expect([...schema.required].sort()).toEqual([...required[name]!].sort())
      for (const [property, definition] of Object.entries(schema.properties)) {
        expect(definition.description, `${name}.${property}`).toBeTruthy()
      }
      expect(JSON.stringify(document)).not.toContain("$ref")
    }
  })
})

describe("requests and results on the wire", () => {
  it("decodes a tool request with defaults and file operations, and refuses an unknown operation", () => {
    const tool = decodeServer(JSON.stringify({
      type: "request",
      request_id: "tcl_abc:1",
      operation: "tool",
      tool_call_id: "tcl_abc",
      tool: "read_file",
      input: { path: "a.txt" }
    }))
    expect(Result.getOrThrow(tool)).toMatchObject({ operation: "tool", cwd: null, env: {} })
    const write = decodeServer(JSON.stringify({ type: "request", request_id: "r2", operation: "file.write", path: "/a", content: "x" }))
    expect(Result.getOrThrow(write)).toMatchObject({ encoding: "utf-8" })
    const later = JSON.stringify({ type: "request", request_id: "r3", operation: "worktree.create", path: "/a" })
    expect(Result.isFailure(decodeServer(later))).toBe(true)
    expect(Schema.decodeUnknownSync(Schema.fromJsonString(RequestEnvelope))(later).request_id).toBe("r3")
    expect(Result.isFailure(decodeServer(JSON.stringify({ type: "request", request_id: "has space", operation: "file.read", path: "/a" })))).toBe(true)
  })

  it("encodes results, whose output follows the operation's schema", () => {
    const failed = Schema.encodeSync(DaemonMessageJson)({
      type: "result",
      request_id: "r1",
      outcome: "failed",
      error: { code: "file_content_conflict", message: "changed", current_digest: `sha256:${"a".repeat(64)}` }
    })
    expect(JSON.parse(failed)).toEqual({
      type: "result",
      request_id: "r1",
      outcome: "failed",
      error: { code: "file_content_conflict", message: "changed", current_digest: `sha256:${"a".repeat(64)}` }
    })
    const output = outputSchemaOf({ operation: "file.write", path: "/a", content: "", encoding: "utf-8" })
    expect(Result.isSuccess(Schema.decodeUnknownResult(output)({ path: "/a", digest: `sha256:${"0".repeat(64)}`, size: 0, created: true })))
      .toBe(true)
    expect(Result.isFailure(Schema.decodeUnknownResult(output)({ path: "/a", digest: "md5:00", size: 0, created: true }))).toBe(true)
  })
})

describe("registration", () => {
  const body = {
    machine_name: "build box",
    hostname: "box.local",
    platform: "linux",
    architecture: "x86_64",
    daemon_version: "0.1.0",
    machine_id: null,
    directories: ["/home/me/src"]
  }
  const problems = (input: unknown) =>
    Result.match(Schema.decodeUnknownResult(RegisterMachineRequest)(input), { onFailure: (error) => error.message, onSuccess: () => "" })
  const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, "v"]))

  it("accepts the spec's body, with at most 15 metadata pairs from the caller", () => {
    expect(problems(body)).toBe("")
    expect(problems({ ...body, machine_id: `mch_${"a".repeat(26)}`, metadata: pairs(15) })).toBe("")
    expect(problems({ ...body, directories: undefined, metadata: undefined, machine_id: undefined })).toBe("")
  })

  it("refuses metadata over the limits or naming observed_platform, relative directories, bad versions and ids", () => {
    expect(problems({ ...body, metadata: pairs(16) })).toContain("at most 15 pairs")
    expect(problems({ ...body, metadata: { observed_platform: "linux" } })).toContain("observed_platform")
    expect(problems({ ...body, metadata: { ["k".repeat(65)]: "v" } })).toContain("keys must be 1 to 64 characters")
    expect(problems({ ...body, metadata: { "": "v" } })).toContain("keys must be 1 to 64 characters")
    expect(problems({ ...body, metadata: { k: "v".repeat(513) } })).not.toBe("")
    expect(problems({ ...body, metadata: { k: 1 } })).not.toBe("")
    expect(problems({ ...body, directories: ["relative/dir"] })).toContain("absolute path")
    expect(problems({ ...body, daemon_version: "latest" })).toContain("semantic version")
    expect(problems({ ...body, machine_id: "mch_short" })).toContain("mch_")
    expect(problems({ ...body, machine_name: " padded" })).toContain("whitespace")
  })

  it("decodes a machine whose status a later server added", () => {
    const now = new Date().toISOString()
    const machine = Schema.decodeUnknownSync(MachineDescriptor)({
      id: `mch_${"b".repeat(26)}`,
      name: "box",
      status: "provisioning",
      created_at: now,
      updated_at: now,
      hostname: "box",
      platform: "linux",
      architecture: "arm64",
      daemon_version: "0.1.0",
      last_seen_at: now,
      metadata: { observed_platform: "linux" }
    })
    expect(machine.status).toBe("provisioning")
  })
})
