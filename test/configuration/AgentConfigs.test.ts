import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createHash } from "node:crypto"
import type { ValidationFailed } from "../../src/domain/shared/Errors.ts"
import type { ProjectId } from "../../src/domain/shared/Ids.ts"
import { describeApp,
  expectFailure,
  ID_PATTERN,
  joinOrganization,
  newUser,
  rawRequest,
} from "../support/TestApp.ts"

const HASH = /^sha256:[0-9a-f]{64}$/

/** An owner with an organization, two projects, a provider config "Anthropic" and a model "Sonnet" granted to the first project. */
const setUp = (label = "Configs") =>
  Effect.gen(function*() {
    const owner = yield* newUser("owner")
    const org = yield* owner.client.organizations.create({ payload: { name: label } })
    const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
    const other = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Other" } })
    const provider = yield* owner.client.modelProviderConfigs.create({
      params: { orgID: org.id },
      payload: { name: "Anthropic", api_format: "anthropic-messages", base_url: "https://api.anthropic.com/v1" }
    })
    const model = yield* owner.client.models.create({
      params: { orgID: org.id },
      payload: {
        provider_config_id: provider.id,
        name: "Sonnet",
        provider_model_slug: "claude-sonnet-4-5",
        context_window_tokens: 200_000,
        max_output_tokens: 64_000,
        default_max_output_tokens: 8_000,
        supports_tools: true,
        supports_reasoning: true,
        input_modalities: ["text", "image"],
        output_modalities: ["text"]
      }
    })
    yield* owner.client.models.createGrant({
      params: { orgID: org.id, modelID: model.id },
      payload: { target_project_id: project.id }
    })
    const create = (source: string | Record<string, unknown>, source_format: "yaml" | "json", projectId = project.id) =>
      Effect.map(
        owner.client.agentConfigs.create({
          params: { orgID: org.id, projectID: projectId },
          payload: { source, source_format },
          responseMode: "decoded-and-response"
        }),
        ([config, response]) => ({ config, status: response.status })
      )
    /** A docker pool "builders" of the organization granted to `projectIds` (never started: configs only name it). */
    const dockerPool = (projectIds: ReadonlyArray<ProjectId>) =>
      Effect.gen(function*() {
        const auth = yield* owner.client.secrets.create({
          params: { orgID: org.id },
          payload: { name: "docker-auth", value: Redacted.make("{}") }
        })
        const pool = yield* owner.client.machinePools.create({
          params: { orgID: org.id },
          payload: {
            name: "builders",
            provider: "docker",
            provider_auth_secret_id: auth.id,
            default_machine_provider_options: { image: "node:22" },
            max_total_machines: 2,
            default_machine_cpu: 1,
            default_machine_memory_mb: 512,
            max_total_cpu: 2,
            max_total_memory_mb: 1024
          }
        })
        for (const projectId of projectIds) {
          yield* owner.client.machinePools.createGrant({
            params: { orgID: org.id, poolID: pool.id },
            payload: { target_project_id: projectId }
          })
        }
        return pool
      })
    const grantedDockerPool = dockerPool([project.id])
    return { owner, org, project, other, provider, model, create, dockerPool, grantedDockerPool }
  })

const YAML_SOURCE = `# Support agent: answers customers.
instruction: |
  You help customers.
model:
  provider_config: Anthropic   # the org's provider
  name: Sonnet
`

const sha256 = (text: string) => "sha256:" + createHash("sha256").update(text, "utf8").digest("hex")

/** The issues of a validation_failed answer. */
const issuesOf = (error: unknown) => {
  expect((error as { _tag: string })._tag).toBe("ValidationFailed")
  return (error as ValidationFailed).issues ?? []
}

/** The one issue of a source nested deeper than 64 levels, at `line` and `column`. */
const tooDeep = (format: "JSON" | "YAML", line: number, column: number) => [{
  path: "",
  message: format === "JSON"
    ? "JSON syntax error: arrays and objects nest deeper than 64 levels"
    : "YAML syntax error: sequences and mappings nest deeper than 64 levels",
  line,
  column
}]

const brackets = (n: number) => "[".repeat(n) + "]".repeat(n)

describeApp()("agent configs", (it) => {
  it.effect("YAML: 201, then 200 with the same config; comments kept verbatim; compiled defaults", () =>
    Effect.gen(function*() {
      const { create, model, org, project } = yield* setUp()
      const first = yield* create(YAML_SOURCE, "yaml")
      expect(first.status).toBe(201)
      const config = first.config
      expect(config.id).toMatch(ID_PATTERN("acfg"))
      expect(config).toMatchObject({ org_id: org.id, project_id: project.id, source_format: "yaml" })
      expect(config.source).toBe(YAML_SOURCE)
      expect(config.effective_definition_hash).toMatch(HASH)
      expect(config.instruction_hash).toBe(sha256("You help customers.\n"))

      const compiled = config.compiled_definition
      expect(compiled.instruction).toBe("You help customers.\n")
      expect(compiled.version).toBe("v1")
      expect(compiled.max_depth).toBe(3)
      expect(compiled.max_subagents).toBe(8)
      expect(compiled.model).toEqual({
        configured_model_id: model.id,
        context_window_tokens: 200_000,
        default_max_output_tokens: 8_000,
        cache_retention: "short",
        reasoning: { effort: "medium" }
      })
      expect(compiled.tools?.ask_question).toMatchObject({ enabled: true, permission: "allow", type: "built_in" })
      // Machine tools are listed, but off without a machine source.
      expect(compiled.tools?.run_command).toMatchObject({ enabled: false, permission: "ask", type: "built_in" })
      expect(compiled.machine_sources).toEqual([])
      expect(compiled.skills).toEqual([])

      expect(config.model).toMatchObject({
        provider_config: "Anthropic",
        name: "Sonnet",
        provider_model_slug: "claude-sonnet-4-5",
        configured_model_id: model.id,
        current_revision_id: model.current_revision_id,
        api_format: "anthropic-messages",
        api_variant: "default",
        context_window_tokens: 200_000,
        max_output_tokens: 64_000,
        default_max_output_tokens: 8_000,
        default_cache_retention: "short",
        supports_tools: true,
        supports_reasoning: true,
        default_reasoning_effort: "medium"
      })

      const again = yield* create(YAML_SOURCE, "yaml")
      expect(again.status).toBe(200)
      expect(again.config.id).toBe(config.id)
      expect(again.config.created_at).toEqual(config.created_at)

      // Another text of the same definition is another source: a new config, with the same effective hash.
      const reformatted = yield* create(YAML_SOURCE.replace("# Support agent", "# The support agent"), "yaml")
      expect(reformatted.status).toBe(201)
      expect(reformatted.config.id).not.toBe(config.id)
      expect(reformatted.config.effective_definition_hash).toBe(config.effective_definition_hash)
    }))

  it.effect("JSON text, object and reordered keys map to one config, stored canonically", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const text = `{
  "model": { "provider_config": "Anthropic", "name": "Sonnet" },
  "instruction": "Help.",
  "max_depth": 2
}`
      const first = yield* create(text, "json")
      expect(first.status).toBe(201)
      const canonical =
        `{"instruction":"Help.","max_depth":2,"model":{"name":"Sonnet","provider_config":"Anthropic"}}`
      expect(first.config.source).toBe(canonical)
      expect(first.config.source_format).toBe("json")

      const asObject = yield* create(
        { instruction: "Help.", model: { name: "Sonnet", provider_config: "Anthropic" }, max_depth: 2 },
        "json"
      )
      expect(asObject.status).toBe(200)
      expect(asObject.config.id).toBe(first.config.id)

      const reordered = yield* create(
        `{"max_depth":2,"instruction":"Help.","model":{"name":"Sonnet","provider_config":"Anthropic"}}`,
        "json"
      )
      expect(reordered.status).toBe(200)
      expect(reordered.config.id).toBe(first.config.id)
    }))

  it.effect("concurrent sends of one new source make one config", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const source = YAML_SOURCE.replace("customers", "customers, concurrently")
      const results = yield* Effect.all(Array.from({ length: 6 }, () => create(source, "yaml")), { concurrency: "unbounded" })
      expect(new Set(results.map((r) => r.config.id)).size).toBe(1)
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201])
    }))

  it.effect("a model used by a config cannot be deleted", () =>
    Effect.gen(function*() {
      const { create, model, org, owner } = yield* setUp()
      yield* create(YAML_SOURCE, "yaml")
      const error = yield* expectFailure(owner.client.models.remove({ params: { orgID: org.id, modelID: model.id } }))
      expect(error).toMatchObject({ _tag: "Conflict", error: expect.stringContaining("revoke its grants") })
    }))

  it.effect("issues carry JSON pointers and the line and column of the node, in YAML", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const source = [
        "# bad config",
        "instruction: Help.",
        "model:",
        "  provider_config: Anthropic",
        "  name: Sonnet",
        "  temperature: 0.2",
        "max_depth: 9",
        "tools:",
        "  my_tool:",
        "    type: custom",
        "    description: Does things",
        "    input_schema: { type: object }",
        "    permission: sometimes",
        ""
      ].join("\n")
      const error = yield* expectFailure(create(source, "yaml"))
      const issues = issuesOf(error)
      expect(issues.map(({ column, line, path }) => ({ path, line, column }))).toEqual([
        { path: "/model/temperature", line: 6, column: 3 },
        { path: "/max_depth", line: 7, column: 12 },
        { path: "/tools/my_tool/permission", line: 13, column: 17 }
      ])
      expect(issues[1].message).toContain("1 to 8")
    }))

  it.effect("issues are positioned in JSON text, and in the canonical text of an object", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const text = `{
  "instruction": "Help.",
  "model": {"provider_config": "Anthropic", "name": "Sonnet"},
  "version": "v2"
}`
      const fromText = issuesOf(yield* expectFailure(create(text, "json")))
      expect(fromText).toEqual([{ path: "/version", message: expect.stringContaining("v1"), line: 4, column: 14 }])

      const fromObject = issuesOf(yield* expectFailure(create(
        { instruction: "Help.", model: { provider_config: "Anthropic", name: "Sonnet" }, max_depth: 0 },
        "json"
      )))
      // {"instruction":"Help.","max_depth":0,... : the 0 is the 36th character.
      expect(fromObject.map(({ column, line, path }) => ({ path, line, column }))).toEqual([
        { path: "/max_depth", line: 1, column: 36 }
      ])
    }))

  it.effect("syntax errors are issues with their position", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const yamlIssues = issuesOf(yield* expectFailure(create("instruction: Help.\nmodel: {name: x\n", "yaml")))
      expect(yamlIssues.length).toBeGreaterThan(0)
      expect(yamlIssues[0].path).toBe("")
      expect(yamlIssues[0].message).toMatch(/YAML syntax error/)
      expect(yamlIssues[0].line).toBeGreaterThanOrEqual(2)

      const jsonIssues = issuesOf(yield* expectFailure(create(`{\n  "instruction": "Help.",\n  "model": }`, "json")))
      expect(jsonIssues).toEqual([
        { path: "", message: expect.stringMatching(/JSON syntax error/), line: 3, column: 12 }
      ])

      const duplicate = issuesOf(yield* expectFailure(create(`instruction: a\ninstruction: b\n`, "yaml")))
      expect(duplicate[0]).toMatchObject({ line: 2, column: 1 })
    }))

  it.effect("a YAML tag outside the core schema, or one its value does not fit, is an issue at the tag, not dropped", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const MODEL_LINE = "model: {provider_config: Anthropic, name: Sonnet}\n"
      const unsupported = (tag: string) =>
        `YAML syntax error: the tag ${tag} is not supported (only the core tags !!str, !!int, !!float, !!bool, !!null, !!seq and !!map are); remove it`
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<{ message: string; line: number; column: number }>]> = [
        [`instruction: !!js/function "x"\n${MODEL_LINE}`, [{ message: unsupported("!!js/function"), line: 1, column: 14 }]],
        [`instruction: !local x\n${MODEL_LINE}`, [{ message: unsupported("!local"), line: 1, column: 14 }]],
        // YAML 1.1's types are not JSON values either.
        [`${MODEL_LINE}instruction: !!binary aGk=\n`, [{ message: unsupported("!!binary"), line: 2, column: 14 }]],
        [`instruction: x\n${MODEL_LINE}tools: !!set {a: null}\n`, [{ message: unsupported("!!set"), line: 3, column: 8 }]],
        [`%TAG !e! tag:example.com,2000:\n---\ninstruction: !e!x y\n${MODEL_LINE}`, [{
          message: unsupported("tag:example.com,2000:x"),
          line: 3,
          column: 14
        }]],
        // A core tag the value does not fit would be dropped as well; each tag is its own issue.
        [`instruction: x\n${MODEL_LINE}max_depth: !!int three\nmax_subagents: !!map 2\n`, [
          { message: "YAML syntax error: the value does not fit its tag !!int; remove the tag or change the value", line: 3, column: 12 },
          { message: "YAML syntax error: the value does not fit its tag !!map; remove the tag or change the value", line: 4, column: 16 }
        ]]
      ]
      for (const [source, expected] of cases) {
        const failure = yield* expectFailure(create(source, "yaml"))
        expect(issuesOf(failure), source).toEqual(expected.map((issue) => ({ path: "", ...issue })))
        expect((failure as ValidationFailed).error, source).toContain(`document (line ${expected[0].line}, column ${expected[0].column}): ${expected[0].message}`)
      }

      // The core tags, and the non-specific !, are taken as YAML 1.2 says.
      const tagged = yield* create(`instruction: !!str 12\n${MODEL_LINE}max_depth: !!int "2"\nmcp: !!map {}\nskills: !!seq []\nmachine_sources: ! []\n`, "yaml")
      expect(tagged.status).toBe(201)
      expect(tagged.config.compiled_definition).toMatchObject({ instruction: "12", max_depth: 2 })
    }))

  it.effect("a 1 MB JSON source nested 500,000 deep is a syntax error at its 65th level", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      // The document is level 1: the 64th "[" after `{"instruction":"hi","model":` (28
      // characters) opens the 65th.
      const deepJson = `{"instruction":"hi","model":${brackets(500_000)}}`
      expect(issuesOf(yield* expectFailure(create(deepJson, "json")))).toEqual(tooDeep("JSON", 1, 92))
    }))

  it.effect("a 1 MB YAML source of nested flow sequences is a syntax error at its 65th level", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const deepFlow = `instruction: hi\nmodel: ${brackets(500_000)}\n`
      expect(issuesOf(yield* expectFailure(create(deepFlow, "yaml")))).toEqual(tooDeep("YAML", 2, 71))
    }))

  it.effect("YAML nested by compact sequences or by indentation is a syntax error at its 65th level", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const deepCompact = "instruction: hi\nmodel:\n" + "- ".repeat(500_000) + "x\n"
      expect(issuesOf(yield* expectFailure(create(deepCompact, "yaml")))).toEqual(tooDeep("YAML", 3, 127))
      // A line that closes them all at once made the yaml package's parser overflow the stack
      // (a 500) for as few as 20,000 levels.
      const closed = "instruction: hi\nmodel:\n" + "- ".repeat(20_000) + "x\nname: y\n"
      expect(issuesOf(yield* expectFailure(create(closed, "yaml")))).toEqual(tooDeep("YAML", 3, 127))
      // Block mappings nested by indentation: `a:` at indentation i is level i + 1.
      const deepBlock = "instruction: hi\nmodel:\n" +
        Array.from({ length: 100 }, (_, i) => " ".repeat(i + 1) + "a:\n").join("")
      expect(issuesOf(yield* expectFailure(create(deepBlock, "yaml")))).toEqual(tooDeep("YAML", 66, 65))
    }))

  it.effect("a source nested 64 levels deep is read; 65 levels are a syntax error, in JSON and YAML", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      // 64 levels are read, and the document is then checked as usual.
      const atLimit = (issues: ReadonlyArray<{ readonly path: string }>) =>
        expect(issues.map(({ path }) => path)).toEqual(["/model"])
      atLimit(issuesOf(yield* expectFailure(create(`{"instruction":"hi","model":${brackets(63)}}`, "json"))))
      atLimit(issuesOf(yield* expectFailure(create(`instruction: hi\nmodel: ${brackets(63)}\n`, "yaml"))))
      expect(issuesOf(yield* expectFailure(create(`{"instruction":"hi","model":${brackets(64)}}`, "json"))))
        .toEqual(tooDeep("JSON", 1, 92))
      expect(issuesOf(yield* expectFailure(create(`instruction: hi\nmodel: ${brackets(64)}\n`, "yaml"))))
        .toEqual(tooDeep("YAML", 2, 71))
    }))

  it.effect("malformed YAML that the yaml package's error recovery nests too deep is a syntax error", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      // The parser nests a level per line here where the scan of the text counts none: what it
      // built is checked before it is composed.
      const recovered = "instruction: hi\nmodel: ? [ #c" + "\n    - ---\n>? [".repeat(200)
      expect(issuesOf(yield* expectFailure(create(recovered, "yaml")))).toEqual(tooDeep("YAML", 128, 4))
    }))

  it.effect("a source of more than 100,000 tokens is refused at the token past the limit; 100,000 are read", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const tooMany = (line: number, column: number) => [{
        path: "",
        message: expect.stringMatching(/^the source has more than 100,000 tokens \(/),
        line,
        column
      }]
      // The two lines are 21 tokens and each blank line one: 99,979 blank lines make 100,000.
      const head = "instruction: hi\nmodel: {name: x}\n"
      expect(issuesOf(yield* expectFailure(create(head + "\n".repeat(99_979), "yaml"))).map(({ path }) => path))
        .toEqual(["/model/provider_config"])
      expect(issuesOf(yield* expectFailure(create(head + "\n".repeat(500_000), "yaml")))).toEqual(tooMany(99_982, 1))
      // JSON is read by the same lexer: a number is two tokens, a comma and a space one each.
      const numbers = JSON.stringify({ instruction: "hi", model: { name: "x" }, skills: Array.from({ length: 60_000 }, (_, i) => i) })
      expect(issuesOf(yield* expectFailure(create(numbers, "json")))).toEqual(tooMany(1, 188_909))
      // Long text in a block scalar is a few tokens however long.
      const long = "instruction: |\n" + "  a line of the instruction\n".repeat(30_000) + "model: {name: x}\n"
      expect(issuesOf(yield* expectFailure(create(long, "yaml"))).map(({ path }) => path)).toEqual(["/model/provider_config"])
    }))

  it.effect("a YAML source of more than 100 aliases is refused at the 101st; issues under an alias point into its anchor", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      // 20,000 aliases of 400 anchors held the server's thread for 34 s before the yaml
      // package refused them ("Excessive alias count").
      const anchors = Array.from({ length: 400 }, (_, i) => `&a${i} x`).join(", ")
      const aliases = Array.from({ length: 20_000 }, (_, i) => `*a${Math.floor(i / 50)}`).join(", ")
      const source = `instruction: hi\nmodel: {name: x}\nanchors: [${anchors}]\nmany: &X [${aliases}]\nagain: *X\n`
      // Line 4 is `many: &X [` (10 characters), then 100 aliases of 5 characters and a comma and
      // a space each (*a0 to *a1 are 3 characters: 50 of them), so the 101st starts at column
      // 11 + 50 * 5 + 50 * 5 = 511.
      expect(issuesOf(yield* expectFailure(create(source, "yaml")))).toEqual([{
        path: "",
        message: "the source has more than 100 aliases (*name); write the values out",
        line: 4,
        column: 511
      }])
      // Through an alias, each issue is positioned in the anchored mapping.
      const aliased = YAML_SOURCE + "shared: &T {teleport: 5, beam: 5}\ntools: *T\n"
      expect(issuesOf(yield* expectFailure(create(aliased, "yaml"))).map(({ column, line, path }) => ({ path, line, column })))
        .toEqual([
          { path: "/shared", line: 7, column: 1 },
          { path: "/tools/teleport", line: 7, column: 23 },
          { path: "/tools/beam", line: 7, column: 32 }
        ])
    }))

  it.effect("a source with more than 100 problems lists the first 100, and says how many there are", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const source = "instruction: hi\nmodel: {provider_config: Anthropic, name: Sonnet}\nskills:\n" +
        Array.from({ length: 150 }, (_, i) => `  - ${i}\n`).join("")
      const error = (yield* expectFailure(create(source, "yaml"))) as ValidationFailed
      expect(error.error).toMatch(/^The agent config source has 150 problems \(the first 100 are listed in issues\): \/skills\/0 \(line 4, column 5\)/)
      const issues = issuesOf(error)
      expect(issues).toHaveLength(100)
      expect(issues[99]).toMatchObject({ path: "/skills/99", line: 103, column: 5 })
    }))

  it.effect("version, max_depth, max_subagents, instruction and unknown properties", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const base = `model:\n  provider_config: Anthropic\n  name: Sonnet\n`
      const failsAt = (extra: string, path: string) =>
        Effect.gen(function*() {
          const issues = issuesOf(yield* expectFailure(create(base + extra, "yaml")))
          expect(issues.map((issue) => issue.path)).toEqual([path])
          return issues[0]
        })
      yield* failsAt("instruction: Help.\nversion: v2\n", "/version")
      yield* failsAt("instruction: Help.\nmax_depth: 0\n", "/max_depth")
      yield* failsAt("instruction: Help.\nmax_depth: 9\n", "/max_depth")
      yield* failsAt("instruction: Help.\nmax_depth: 2.5\n", "/max_depth")
      yield* failsAt("instruction: Help.\nmax_subagents: 0\n", "/max_subagents")
      yield* failsAt("instruction: Help.\nmax_subagents: 2147483648\n", "/max_subagents")
      yield* failsAt("instruction: \"\"\n", "/instruction")
      yield* failsAt("instruction: \"  \\n\\t \"\n", "/instruction")
      const missing = yield* failsAt("version: v1\n", "/instruction")
      expect(missing.message).toBe("is required")
      const unknown = yield* failsAt("instruction: Help.\ntemperature: 1\n", "/temperature")
      expect(unknown).toMatchObject({ line: 5, column: 1 })
      yield* failsAt("instruction: Help.\nmcp:\n  docs:\n    url: https://mcp.example.test\n    colour: red\n", "/mcp/docs/colour")

      const ok = yield* create(base + "instruction: Help.\nversion: v1\nmax_depth: 8\nmax_subagents: 2147483647\n", "yaml")
      expect(ok.status).toBe(201)
      expect(ok.config.compiled_definition).toMatchObject({ max_depth: 8, max_subagents: 2147483647 })
    }))

  it.effect("an ungranted model is an issue at its name; once granted it resolves", () =>
    Effect.gen(function*() {
      const { create, model, org, other, owner } = yield* setUp()
      const issues = issuesOf(yield* expectFailure(create(YAML_SOURCE, "yaml", other.id)))
      expect(issues).toEqual([{ path: "/model/name", message: expect.stringContaining("granted"), line: 6, column: 9 }])
      const unknownModel = issuesOf(yield* expectFailure(create(YAML_SOURCE.replace("name: Sonnet", "name: Sonet"), "yaml")))
      expect(unknownModel).toEqual([{ path: "/model/name", message: expect.stringContaining('"Sonet"'), line: 6, column: 9 }])
      yield* owner.client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: other.id } })
      const created = yield* create(YAML_SOURCE, "yaml", other.id)
      expect(created.status).toBe(201)
      expect(created.config.compiled_definition.model.configured_model_id).toBe(model.id)
    }))

  it.effect("a provider config the organization lacks is an issue at provider_config, in YAML, JSON and subagents", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const mistyped = issuesOf(
        yield* expectFailure(create(YAML_SOURCE.replace("provider_config: Anthropic", "provider_config: Antropic"), "yaml"))
      )
      expect(mistyped).toEqual([{
        path: "/model/provider_config",
        message: 'no model provider config "Antropic" in this organization; check the name',
        line: 5,
        column: 20
      }])
      const json = issuesOf(yield* expectFailure(create(
        { instruction: "Help.", model: { provider_config: "openia", name: "Sonnet" } },
        "json"
      )))
      expect(json).toHaveLength(1)
      expect(json).toMatchObject([{ path: "/model/provider_config", message: expect.stringContaining('"openia"') }])
      const subagent = issuesOf(yield* expectFailure(create(
        YAML_SOURCE + "subagents:\n  helper:\n    description: Assists.\n    instruction: Assist.\n    model: { provider_config: openia, name: Sonnet }\n",
        "yaml"
      )))
      expect(subagent.map((issue) => issue.path)).toEqual(["/subagents/helper/model/provider_config"])
    }))

  it.effect("model overrides may only narrow the model", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const withOverrides = (overrides: string) =>
        `instruction: Help.\nmodel:\n  provider_config: Anthropic\n  name: Sonnet\n${overrides}`
      const wide = issuesOf(yield* expectFailure(create(
        withOverrides("  context_window_tokens: 300000\n  max_output_tokens: 70000\n  reasoning: { effort: extreme }\n"),
        "yaml"
      )))
      expect(wide.map(({ column, line, path }) => ({ path, line, column }))).toEqual([
        { path: "/model/context_window_tokens", line: 5, column: 26 },
        { path: "/model/max_output_tokens", line: 6, column: 22 },
        { path: "/model/reasoning/effort", line: 7, column: 24 }
      ])

      const narrow = yield* create(
        withOverrides("  context_window_tokens: 100000\n  max_output_tokens: 4000\n  cache_retention: none\n  reasoning: { effort: high }\n"),
        "yaml"
      )
      expect(narrow.status).toBe(201)
      expect(narrow.config.compiled_definition.model).toMatchObject({
        context_window_tokens: 100_000,
        default_max_output_tokens: 4_000,
        cache_retention: "none",
        reasoning: { effort: "high" }
      })
      expect(narrow.config.model).toMatchObject({
        context_window_tokens: 100_000,
        max_output_tokens: 4_000,
        default_max_output_tokens: 4_000,
        default_cache_retention: "none",
        default_reasoning_effort: "high"
      })
    }))

  it.effect("model is rendered from the current revision after a model PATCH", () =>
    Effect.gen(function*() {
      const { create, model, org, owner, project } = yield* setUp()
      const { config } = yield* create(YAML_SOURCE, "yaml")
      const updated = yield* owner.client.models.update({
        params: { orgID: org.id, modelID: model.id },
        payload: { provider_model_slug: "claude-sonnet-4-6", context_window_tokens: 180_000 }
      })
      expect(updated.current_revision_id).not.toBe(model.current_revision_id)
      const got = yield* owner.client.agentConfigs.get({
        params: { orgID: org.id, projectID: project.id, agentConfigID: config.id }
      })
      expect(got.model).toMatchObject({
        current_revision_id: updated.current_revision_id,
        provider_model_slug: "claude-sonnet-4-6",
        context_window_tokens: 180_000
      })
      // The compiled definition is immutable.
      expect(got.compiled_definition).toEqual(config.compiled_definition)
      // Same names, same resources: the same config.
      const again = yield* create(YAML_SOURCE, "yaml")
      expect(again.status).toBe(200)
      expect(again.config.id).toBe(config.id)
    }))

  it.effect("names that resolve to other resources make a new config", () =>
    Effect.gen(function*() {
      const { create, model, org, owner, project, provider } = yield* setUp()
      const first = yield* create(YAML_SOURCE, "yaml")
      yield* owner.client.models.update({ params: { orgID: org.id, modelID: model.id }, payload: { name: "Sonnet old" } })
      const replacement = yield* owner.client.models.create({
        params: { orgID: org.id },
        payload: {
          provider_config_id: provider.id,
          name: "Sonnet",
          provider_model_slug: "claude-sonnet-5",
          context_window_tokens: 400_000,
          supports_tools: true,
          supports_reasoning: false,
          input_modalities: ["text"],
          output_modalities: ["text"]
        }
      })
      yield* owner.client.models.createGrant({
        params: { orgID: org.id, modelID: replacement.id },
        payload: { target_project_id: project.id }
      })
      const second = yield* create(YAML_SOURCE, "yaml")
      expect(second.status).toBe(201)
      expect(second.config.id).not.toBe(first.config.id)
      expect(second.config.effective_definition_hash).not.toBe(first.config.effective_definition_hash)
      expect(second.config.model.configured_model_id).toBe(replacement.id)
      expect(second.config.compiled_definition.model.reasoning).toEqual({})
      // The first config still renders its own model, under its new name.
      const firstNow = yield* owner.client.agentConfigs.get({
        params: { orgID: org.id, projectID: project.id, agentConfigID: first.config.id }
      })
      expect(firstNow.model).toMatchObject({ configured_model_id: model.id, name: "Sonnet old" })
    }))

  it.effect("skills resolve when owned, granted or personal; otherwise an issue", () =>
    Effect.gen(function*() {
      const { create, org, other, owner, project } = yield* setUp()
      const source = YAML_SOURCE + "skills:\n  - name: Deploy\n"
      const missing = issuesOf(yield* expectFailure(create(source, "yaml")))
      expect(missing).toEqual([{ path: "/skills/0/name", message: expect.any(String), line: 8, column: 11 }])

      const skill = yield* owner.client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Deploy", description: "A skill", owner_project_id: other.id, content: { "SKILL.md": "deploy" } }
      })
      const ungranted = issuesOf(yield* expectFailure(create(source, "yaml")))
      expect(ungranted.map((issue) => issue.path)).toEqual(["/skills/0/name"])

      yield* owner.client.skills.createGrant({
        params: { orgID: org.id, skillID: skill.id },
        payload: { target_project_id: project.id }
      })
      const granted = yield* create(source, "yaml")
      expect(granted.status).toBe(201)
      expect(granted.config.compiled_definition.skills).toEqual([{ skill_id: skill.id, name: "Deploy", version: 1 }])

      // A new version of an unpinned skill resolves differently: a new config pinned to it.
      yield* owner.client.skills.createVersion({
        params: { orgID: org.id, skillID: skill.id },
        payload: { content: { "SKILL.md": "deploy v2" } }
      })
      const newer = yield* create(source, "yaml")
      expect(newer.status).toBe(201)
      expect(newer.config.compiled_definition.skills).toEqual([{ skill_id: skill.id, name: "Deploy", version: 2 }])

      const pinned = yield* create(YAML_SOURCE + "skills:\n  - name: Deploy\n    version: 3\n", "yaml")
        .pipe(expectFailure, Effect.map(issuesOf))
      expect(pinned.map((issue) => issue.path)).toEqual(["/skills/0/version"])

      const personal = yield* owner.client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Mine", description: "A skill", owner: "personal", content: { "SKILL.md": "mine" } }
      })
      const withPersonal = yield* create(YAML_SOURCE + "skills:\n  - name: Mine\n", "yaml")
      expect(withPersonal.config.compiled_definition.skills).toEqual([{ skill_id: personal.id, name: "Mine", version: 1 }])
    }))

  it.effect("a skill named many times is looked up once: each mention resolves, or has its issue, as it would alone", () =>
    Effect.gen(function*() {
      const { create, org, owner, project } = yield* setUp()
      const skill = yield* owner.client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Deploy", description: "A skill", owner_project_id: project.id, content: { "SKILL.md": "deploy" } }
      })
      const source = (skills: ReadonlyArray<string>) => ({
        instruction: "hi",
        model: { provider_config: "Anthropic", name: "Sonnet" },
        skills: skills.map((name) => ({ name }))
      })
      // Each mention after the first resolves to the same skill, which is listed twice.
      const many = yield* expectFailure(create(source(Array.from({ length: 8_000 }, () => "Deploy")), "json"))
      expect(issuesOf(many)[0]).toMatchObject({ path: "/skills/1", message: `skill ${skill.id} is listed twice` })
      expect((many as ValidationFailed).error).toMatch(/^The agent config source has 7999 problems/)
      const mixed = issuesOf(yield* expectFailure(create(source(["Nope", "Deploy", "Nope"]), "json")))
      expect(mixed.map((issue) => issue.path)).toEqual(["/skills/0/name", "/skills/2/name"])
    }), { timeout: 60_000 })

  it.effect("a member whose personal skill an agent's config uses cannot be removed", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* setUp()
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "admin")
      yield* member.client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Mine", description: "A skill", owner: "personal", content: { "SKILL.md": "mine" } }
      })
      const config = yield* member.client.agentConfigs.create({
        params: { orgID: org.id, projectID: project.id },
        payload: { source: YAML_SOURCE + "skills:\n  - name: Mine\n", source_format: "yaml" }
      })
      // Without an agent, a config alone does not block.
      const unused = yield* newUser("unused")
      yield* joinOrganization(owner, org.id, unused, "member")
      yield* unused.client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Mine", description: "A skill", owner: "personal", content: { "SKILL.md": "mine" } }
      })
      yield* owner.client.members.remove({ params: { orgID: org.id, userID: unused.user.id } })

      yield* owner.client.agents.create({
        params: { orgID: org.id, projectID: project.id },
        payload: { agent_config_id: config.id }
      })
      const blocked = yield* expectFailure(owner.client.members.remove({ params: { orgID: org.id, userID: member.user.id } }))
      expect(blocked._tag).toBe("Conflict")
      expect((blocked as { error: string }).error).toContain("Mine")
    }))

  it.effect("secrets in secret_env_overlay resolve by name for the project", () =>
    Effect.gen(function*() {
      const { create, grantedDockerPool, org, owner, project } = yield* setUp()
      const pool = yield* grantedDockerPool
      const source = YAML_SOURCE + [
        "machine_sources:",
        `  - machine_pool_id: ${pool.id}`,
        "    env_overlay: { MODE: ci }",
        "    secret_env_overlay:",
        "      GITHUB_TOKEN: GitHub token",
        "      UNSET_ME: null",
        ""
      ].join("\n")
      const missing = issuesOf(yield* expectFailure(create(source, "yaml")))
      expect(missing).toEqual([
        {
          path: "/machine_sources/0/secret_env_overlay/GITHUB_TOKEN",
          message: expect.stringContaining("GitHub token"),
          line: 11,
          column: 21
        }
      ])
      const secret = yield* owner.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "GitHub token", value: Redacted.make("ghp_not_a_real_token") }
      })
      yield* owner.client.secrets.createGrant({
        params: { orgID: org.id, secretID: secret.id },
        payload: { target_project_id: project.id }
      })
      const created = yield* create(source, "yaml")
      expect(created.config.compiled_definition.machine_sources).toEqual([
        {
          machine_pool_id: pool.id,
          env_overlay: { MODE: "ci" },
          secret_env_overlay: { GITHUB_TOKEN: secret.id, UNSET_ME: null }
        }
      ])
      // With a machine source, the machine tools are on.
      expect(created.config.compiled_definition.tools?.read_file?.enabled).toBe(true)
      expect(JSON.stringify(created.config)).not.toContain("ghp_not_a_real_token")
    }))

  it.effect("env_overlay and secret_env_overlay keys that are no environment variable names are refused, not dropped", () =>
    Effect.gen(function*() {
      const { create, grantedDockerPool } = yield* setUp()
      const pool = yield* grantedDockerPool
      for (const field of ["env_overlay", "secret_env_overlay"]) {
        const source = YAML_SOURCE + [
          "machine_sources:",
          `  - machine_pool_id: ${pool.id}`,
          `    ${field}: { GOOD: null, "1BAD": null }`,
          ""
        ].join("\n")
        const refused = issuesOf(yield* expectFailure(create(source, "yaml")))
        expect(refused).toEqual([
          expect.objectContaining({
            path: `/machine_sources/0/${field}`,
            message: expect.stringContaining('keys must be environment variable names: a letter or _, then letters, digits or _ (at most 128); got "1BAD"')
          })
        ])
      }
    }))

  it.effect("a machine source's machine_pool_id must name a pool of the organization granted to the project", () =>
    Effect.gen(function*() {
      const { create, dockerPool, org, other, owner, project } = yield* setUp()
      // Not granted to the project yet (granted to another project of the organization only).
      const pool = yield* dockerPool([other.id])
      const source = YAML_SOURCE + `machine_sources:\n  - machine_pool_id: ${pool.id}\n`
      const ungranted = issuesOf(yield* expectFailure(create(source, "yaml")))
      expect(ungranted).toEqual([
        {
          path: "/machine_sources/0/machine_pool_id",
          message: expect.stringContaining("is granted to this project"),
          line: 8,
          column: 22
        }
      ])
      // A pool of another organization, even granted there, is no pool of this one.
      const stranger = yield* setUp("Elsewhere")
      const foreign = yield* stranger.dockerPool([stranger.project.id])
      const foreignSource = YAML_SOURCE + `machine_sources:\n  - machine_pool_id: ${foreign.id}\n`
      const notOurs = issuesOf(yield* expectFailure(create(foreignSource, "yaml")))
      expect(notOurs.map((issue) => issue.path)).toEqual(["/machine_sources/0/machine_pool_id"])

      yield* owner.client.machinePools.createGrant({
        params: { orgID: org.id, poolID: pool.id },
        payload: { target_project_id: project.id }
      })
      const created = yield* create(source, "yaml")
      expect(created.status).toBe(201)
      expect(created.config.compiled_definition.machine_sources).toEqual([{ machine_pool_id: pool.id }])
    }))

  it.effect("tools: custom tools, built-in overrides, unknown built-ins", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const source = YAML_SOURCE + [
        "tools:",
        "  lookup_order:",
        "    type: custom",
        "    description: Looks up an order",
        "    input_schema: { type: object, properties: { id: { type: string } } }",
        "    permission: ask",
        "  ask_question:",
        "    permission: ask",
        ""
      ].join("\n")
      const created = yield* create(source, "yaml")
      expect(created.config.compiled_definition.tools?.lookup_order).toEqual({
        enabled: true,
        permission: "ask",
        type: "custom",
        description: "Looks up an order",
        input_schema: { type: "object", properties: { id: { type: "string" } } }
      })
      expect(created.config.compiled_definition.tools?.ask_question).toMatchObject({ permission: "ask", enabled: true })

      const wrong = issuesOf(yield* expectFailure(create(
        YAML_SOURCE + "tools:\n  teleport: {}\n  read_file:\n    type: custom\n    description: x\n    input_schema: { type: object }\n  run_command:\n    enabled: true\n",
        "yaml"
      )))
      expect(wrong.map(({ column, line, path }) => ({ path, line, column }))).toEqual([
        { path: "/tools/teleport", line: 8, column: 3 },
        { path: "/tools/read_file", line: 9, column: 3 },
        { path: "/tools/run_command/enabled", line: 14, column: 14 }
      ])
      // Shape problems come first: a document with any is not resolved or compiled.
      const badName = issuesOf(yield* expectFailure(create(YAML_SOURCE + "tools:\n  teleport: {}\n  \"bad name\": {}\n", "yaml")))
      expect(badName.map(({ column, line, path }) => ({ path, line, column }))).toEqual([
        { path: "/tools/bad name", line: 9, column: 3 }
      ])
    }))

  it.effect("a property named __proto__ anywhere in a source is an issue at its key, in YAML and JSON text", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const yaml = YAML_SOURCE + [
        "tools:",
        "  lookup_order:",
        "    type: custom",
        "    description: Looks up an order",
        "    input_schema:",
        "      type: object",
        "      properties: { __proto__: { type: string }, id: { type: string } }",
        ""
      ].join("\n")
      const fromYaml = issuesOf(yield* expectFailure(create(yaml, "yaml")))
      expect(fromYaml).toEqual([{
        path: "/tools/lookup_order/input_schema/properties/__proto__",
        message: "__proto__ is not accepted as a property name; rename the property",
        line: 13,
        column: 21
      }])
      const json = `{"instruction":"x","model":{"provider_config":"Anthropic","name":"Sonnet"},` +
        `"tools":{"lookup_order":{"type":"custom","description":"d","input_schema":{"__proto__":{}}}}}`
      const fromJson = issuesOf(yield* expectFailure(create(json, "json")))
      expect(fromJson.map(({ path }) => path)).toEqual(["/tools/lookup_order/input_schema/__proto__"])
    }))

  it.effect("a NUL or an unpaired surrogate written as an escape in a source's text is an issue at its string or key, never a 500", () =>
    Effect.gen(function*() {
      const { create, grantedDockerPool } = yield* setUp()
      const NUL = "holds a NUL character (U+0000), which cannot be stored; remove it"
      const lone = (code: string) =>
        `holds an unpaired UTF-16 surrogate (U+${code}), which cannot be stored; write a character outside the ` +
        "Basic Multilingual Plane whole, or as a pair of escapes such as \\ud83d\\ude00"
      // YAML's escapes: \0 in the instruction (a string the compile hashes and stores as text).
      const instruction = yield* expectFailure(create(
        'instruction: "a\\0b"\nmodel:\n  provider_config: Anthropic\n  name: Sonnet\n',
        "yaml"
      ))
      expect(issuesOf(instruction)).toEqual([{ path: "/instruction", message: NUL, line: 1, column: 14 }])
      expect((instruction as ValidationFailed).error).toContain("/instruction (line 1, column 14): holds a NUL character")
      // A name that is resolved in the database (\x00), a tool's description, input_schema values
      // and keys (\ud800, \U00000000, a low half alone): every string and property name is checked.
      const tool = issuesOf(yield* expectFailure(create(
        [
          "instruction: Look orders up.",
          'model: { provider_config: Anthropic, name: "Son\\x00net" }',
          "tools:",
          "  lookup_order:",
          "    type: custom",
          '    description: "Looks up \\ud800 an order"',
          "    input_schema:",
          "      type: object",
          '      required: ["id\\U00000000"]',
          '      properties: { "id\\udc00": { type: string }, other: { type: string } }',
          ""
        ].join("\n"),
        "yaml"
      )))
      expect(tool).toEqual([
        { path: "/model/name", message: NUL, line: 2, column: 44 },
        { path: "/tools/lookup_order/description", message: lone("D800"), line: 6, column: 18 },
        { path: "/tools/lookup_order/input_schema/required/0", message: NUL, line: 9, column: 18 },
        {
          path: "/tools/lookup_order/input_schema/properties",
          message: lone("DC00").replace("holds", "has a property name that holds").replace(
            /write a character .*/,
            "rename the property"
          ),
          line: 10,
          column: 21
        }
      ])

      // JSON text's escapes, in a machine source that would otherwise compile: env_overlay, cwd.
      const pool = yield* grantedDockerPool
      const machineJson = (cwd: string, mode: string) =>
        `{"instruction":"x","model":{"provider_config":"Anthropic","name":"Sonnet"},\n` +
        `"machine_sources":[{"machine_pool_id":"${pool.id}","cwd":"${cwd}",\n"env_overlay":{"MODE":"${mode}"}}]}`
      const machine = issuesOf(yield* expectFailure(create(machineJson("/w\\ud800", "a\\u0000"), "json")))
      expect(machine).toEqual([
        { path: "/machine_sources/0/cwd", message: lone("D800"), line: 2, column: 78 },
        { path: "/machine_sources/0/env_overlay/MODE", message: NUL, line: 3, column: 23 }
      ])
      // A property name in JSON text.
      const key = issuesOf(yield* expectFailure(create(
        `{"instruction":"x","model":{"provider_config":"Anthropic","name":"Sonnet"},"tools":{"t":{"type":"custom",` +
          `"description":"d","input_schema":{"type":"object","properties":{"a\\u0000":{}}}}}}`,
        "json"
      )))
      expect(key.map(({ message, path }) => ({ path, message }))).toEqual([
        { path: "/tools/t/input_schema/properties", message: "has a property name that holds a NUL character (U+0000), which cannot be stored; rename the property" }
      ])

      // A pair of escapes is one character: stored.
      const paired = yield* create(machineJson("/w/\\ud83d\\ude00", "\\ud83d\\ude00"), "json")
      expect(paired.status).toBe(201)
      expect(paired.config.compiled_definition.machine_sources?.[0]).toMatchObject({ cwd: "/w/😀", env_overlay: { MODE: "😀" } })
      const pairedYaml = yield* create('instruction: "smile \\ud83d\\ude00"\nmodel: { provider_config: Anthropic, name: Sonnet }\n', "yaml")
      expect(pairedYaml.config.compiled_definition.instruction).toBe("smile 😀")
    }))

  it.effect("subagents: inline and by config id, with derived depth", () =>
    Effect.gen(function*() {
      const { create } = yield* setUp()
      const helper = yield* create(YAML_SOURCE.replace("You help customers.", "You research.") + "max_depth: 2\n", "yaml")
      const source = YAML_SOURCE + [
        "max_depth: 4",
        "subagents:",
        "  researcher:",
        "    description: Researches things",
        `    agent_config_id: ${helper.config.id}`,
        "  writer:",
        "    description: Writes replies",
        "    instruction: Write the reply.",
        ""
      ].join("\n")
      const created = yield* create(source, "yaml")
      const subagents = created.config.compiled_definition.subagents!
      expect(subagents.researcher).toEqual({
        description: "Researches things",
        agent_config_id: helper.config.id,
        max_depth: 2,
        max_subagents: 8
      })
      expect(subagents.writer.max_depth).toBe(3)
      expect(subagents.writer.definition?.instruction).toBe("Write the reply.")
      expect(subagents.writer.definition?.model).toEqual(created.config.compiled_definition.model)

      const tooShallow = issuesOf(yield* expectFailure(create(
        YAML_SOURCE + "max_depth: 1\nsubagents:\n  w:\n    description: d\n    instruction: i\n",
        "yaml"
      )))
      expect(tooShallow.map((issue) => issue.path)).toEqual(["/subagents"])
      const unknownConfig = issuesOf(yield* expectFailure(create(
        YAML_SOURCE + "subagents:\n  w:\n    description: d\n    agent_config_id: acfg_aaaaaaaaaaaaaaaaaaaaaaaaaa\n",
        "yaml"
      )))
      expect(unknownConfig.map((issue) => issue.path)).toEqual(["/subagents/w/agent_config_id"])
    }))

  it.effect("list is newest first and paginated; get; other tenants see nothing", () =>
    Effect.gen(function*() {
      const { create, org, owner, project } = yield* setUp()
      const ids: Array<string> = []
      for (const n of [1, 2, 3]) {
        ids.push((yield* create(YAML_SOURCE.replace("customers", `customers ${n}`), "yaml")).config.id)
      }
      const page1 = yield* owner.client.agentConfigs.list({
        params: { orgID: org.id, projectID: project.id },
        query: { limit: 2 }
      })
      expect(page1.data.map((c) => c.id)).toEqual([ids[2], ids[1]])
      expect(page1.has_more).toBe(true)
      const page2 = yield* owner.client.agentConfigs.list({
        params: { orgID: org.id, projectID: project.id },
        query: { limit: 2, cursor: page1.next_cursor! }
      })
      expect(page2.data.map((c) => c.id)).toEqual([ids[0]])
      expect(page2.has_more).toBe(false)

      const stranger = yield* newUser("stranger")
      const notFound = yield* expectFailure(stranger.client.agentConfigs.get({
        params: { orgID: org.id, projectID: project.id, agentConfigID: ids[0] as any }
      }))
      expect(notFound._tag).toBe("NotFound")
      const createElsewhere = yield* expectFailure(stranger.client.agentConfigs.create({
        params: { orgID: org.id, projectID: project.id },
        payload: { source: YAML_SOURCE, source_format: "yaml" }
      }))
      expect(createElsewhere._tag).toBe("NotFound")

      // Another organization's project cannot be used to reach the config either.
      const strangerOrg = yield* stranger.client.organizations.create({ payload: { name: "Elsewhere" } })
      const strangerProject = yield* stranger.client.projects.create({
        params: { orgID: strangerOrg.id },
        payload: { name: "P" }
      })
      const crossProject = yield* expectFailure(stranger.client.agentConfigs.get({
        params: { orgID: strangerOrg.id, projectID: strangerProject.id, agentConfigID: ids[0] as any }
      }))
      expect(crossProject._tag).toBe("NotFound")
    }))

  it.effect("a plain member can read but not create", () =>
    Effect.gen(function*() {
      const { create, org, owner, project } = yield* setUp()
      const { config } = yield* create(YAML_SOURCE, "yaml")
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "member")
      const read = yield* member.client.agentConfigs.get({
        params: { orgID: org.id, projectID: project.id, agentConfigID: config.id }
      })
      expect(read.id).toBe(config.id)
      const denied = yield* expectFailure(member.client.agentConfigs.create({
        params: { orgID: org.id, projectID: project.id },
        payload: { source: YAML_SOURCE, source_format: "yaml" }
      }))
      expect(denied._tag).toBe("Forbidden")
    }))

  it.effect("request shape problems are invalid_request, not validation_failed", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* setUp()
      const post = (body: unknown) =>
        rawRequest(
          HttpClientRequest.post(`/v1/orgs/${org.id}/projects/${project.id}/agent-configs`).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyJsonUnsafe(body)
          )
        )
      const objectAsYaml = yield* post({ source: { instruction: "x" }, source_format: "yaml" })
      expect(objectAsYaml.status).toBe(400)
      expect(objectAsYaml.json?.code).toBe("invalid_request")
      const extra = yield* post({ source: YAML_SOURCE, source_format: "yaml", name: "x" })
      expect(extra.json?.code).toBe("invalid_request")
      const empty = yield* post({ source: "", source_format: "yaml" })
      expect(empty.json?.code).toBe("invalid_request")
      const badFormat = yield* post({ source: YAML_SOURCE, source_format: "toml" })
      expect(badFormat.json?.code).toBe("invalid_request")
      const invalid = yield* post({ source: "instruction: x\n", source_format: "yaml" })
      expect(invalid.status).toBe(400)
      expect(invalid.json?.code).toBe("validation_failed")
      expect(invalid.json?.issues).toEqual([{ path: "/model", message: "is required", line: 1, column: 1 }])
    }))

  it.effect("the OpenAPI document lists 200 and 201 for createAgentConfig", () =>
    Effect.gen(function*() {
      const response = yield* rawRequest(HttpClientRequest.get("/v1/openapi.json"))
      const operation = (response.json as any).paths["/v1/orgs/{orgID}/projects/{projectID}/agent-configs"].post
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "201", "400"]))
    }))
})
