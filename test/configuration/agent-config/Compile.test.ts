import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { BUILTIN_TOOLS } from "../../../src/domain/configuration/agent-config/BuiltinTools.ts"
import { compile } from "../../../src/domain/configuration/agent-config/Compile.ts"
import { CompiledAgentConfig } from "../../../src/domain/configuration/agent-config/Compiled.ts"
import { modelKey, type Resolutions } from "../../../src/domain/configuration/agent-config/References.ts"
import { parseSource } from "../../../src/domain/configuration/agent-config/Source.ts"
import { validateDefinition } from "../../../src/domain/configuration/agent-config/Validate.ts"
import type { ConfiguredModelId, ModelProviderConfigId, ModelRevisionId, SecretId, SkillId } from "../../../src/domain/shared/Ids.ts"
import type { ResolvedModel } from "../../../src/domain/configuration/Models.ts"

const model = (overrides: Partial<ResolvedModel["revision"]> = {}): ResolvedModel => ({
  providerConfig: {
    id: "mpc_aaaaaaaaaaaaaaaaaaaaaaaaaa" as ModelProviderConfigId,
    name: "P",
    apiFormat: "openai-responses",
    baseUrl: "https://llm.example.test/v1",
    authSecretId: null
  },
  model: { id: "mdl_aaaaaaaaaaaaaaaaaaaaaaaaaa" as ConfiguredModelId, name: "M" },
  revision: {
    id: "mrev_aaaaaaaaaaaaaaaaaaaaaaaaaa" as ModelRevisionId,
    providerModelSlug: "m-1",
    apiVariant: "default",
    contextWindowTokens: 100_000,
    maxOutputTokens: 10_000,
    defaultMaxOutputTokens: null,
    defaultCacheRetention: "short",
    supportsTools: true,
    supportsReasoning: false,
    defaultReasoningEffort: "none",
    supportedReasoningEfforts: [],
    inputModalities: ["text"],
    outputModalities: ["text"],
    ...overrides
  }
})

const SECRET = "sec_aaaaaaaaaaaaaaaaaaaaaaaaaa" as SecretId
const SKILL = "skl_aaaaaaaaaaaaaaaaaaaaaaaaaa" as SkillId

const resolutions = (resolvedModel = model()): Resolutions => ({
  models: new Map([[modelKey({ provider_config: "P", name: "M" }), resolvedModel]]),
  providerConfigs: new Set(["P"]),
  secrets: new Map([["token", SECRET]]),
  skills: new Map([["name:s", { _tag: "Found", id: SKILL, name: "s", latestVersion: 4 }]]),
  agentConfigs: new Map(),
  machines: new Map(),
  machinePools: new Set()
})

const compileYaml = (yaml: string, resolved = resolutions()) => {
  const parsed = parseSource(yaml, "yaml")
  if (parsed._tag !== "Parsed") throw new Error("syntax")
  const validated = validateDefinition(parsed.source)
  if (validated._tag !== "Valid") throw new Error(JSON.stringify(validated.issues))
  return compile(validated.definition, resolved, parsed.source.issueAt)
}

const BASE = "instruction: Hi\nmodel: { provider_config: P, name: M }\n"

describe("compile", () => {
  it("fills in defaults and matches the CompiledAgentConfig schema", () => {
    const result = compileYaml(BASE)
    if (result._tag !== "Compiled") throw new Error(JSON.stringify(result.issues))
    const { compiled, resolved } = result.compilation
    expect(Object.keys(compiled.tools ?? {}).sort()).toEqual(Object.keys(BUILTIN_TOOLS).sort())
    expect(compiled).toMatchObject({
      version: "v1",
      max_depth: 3,
      max_subagents: 8,
      model: {
        configured_model_id: "mdl_aaaaaaaaaaaaaaaaaaaaaaaaaa",
        context_window_tokens: 100_000,
        cache_retention: "short",
        reasoning: {}
      }
    })
    // No per-request default on the revision: none in the compiled model either.
    expect(compiled.model.default_max_output_tokens).toBeUndefined()
    expect(resolved).toEqual({ "/model": "mdl_aaaaaaaaaaaaaaaaaaaaaaaaaa" })
    expect(() => Schema.decodeUnknownSync(Schema.toType(CompiledAgentConfig), { onExcessProperty: "error" })(compiled)).not.toThrow()
  })

  it("records every resolved name by pointer, skills with their version", () => {
    const result = compileYaml(
      BASE + "skills: [{ name: s }]\nmcp:\n  docs: { url: 'https://mcp.example.test', auth: { type: bearer, secret: token } }\n"
    )
    if (result._tag !== "Compiled") throw new Error(JSON.stringify(result.issues))
    expect(result.compilation.resolved).toEqual({
      "/model": "mdl_aaaaaaaaaaaaaaaaaaaaaaaaaa",
      "/skills/0": `${SKILL}@4`,
      "/mcp/docs/auth/secret": SECRET
    })
    expect(result.compilation.compiled.mcp?.docs).toEqual({
      url: "https://mcp.example.test",
      default_enabled: true,
      permission: "ask",
      auth: { type: "bearer", secret_id: SECRET }
    })
  })

  it("turns unresolved names into positioned issues", () => {
    expect(compileYaml(BASE + "git_credentials: { token_secret: missing }\n")).toEqual({
      _tag: "Invalid",
      issues: [{ path: "/git_credentials/token_secret", message: expect.stringContaining("missing"), line: 3, column: 34 }]
    })
    const noModel = compileYaml(BASE, { ...resolutions(), models: new Map() })
    expect(noModel).toMatchObject({ _tag: "Invalid", issues: [{ path: "/model/name", line: 2, column: 36 }] })
    const noProviderConfig = compileYaml(BASE, { ...resolutions(), models: new Map(), providerConfigs: new Set() })
    expect(noProviderConfig).toMatchObject({
      _tag: "Invalid",
      issues: [{ path: "/model/provider_config", message: expect.stringContaining('"P"'), line: 2, column: 27 }]
    })
  })

  it("with a model without tools, turns the defaults off and refuses tools", () => {
    const noTools = resolutions(model({ supportsTools: false }))
    const plain = compileYaml(BASE, noTools)
    if (plain._tag !== "Compiled") throw new Error("expected a compilation")
    expect(Object.values(plain.compilation.compiled.tools ?? {}).every((tool) => !tool.enabled)).toBe(true)
    const custom = compileYaml(
      BASE + "tools:\n  t: { type: custom, description: d, input_schema: { type: object } }\n",
      noTools
    )
    expect(custom).toMatchObject({ _tag: "Invalid", issues: [{ path: "/tools/t" }] })
  })

  it("derives subagent depth and inherits the model", () => {
    const result = compileYaml(BASE + "max_depth: 5\nmax_subagents: 2\nsubagents:\n  w: { description: d, instruction: i }\n")
    if (result._tag !== "Compiled") throw new Error(JSON.stringify(result.issues))
    const sub = result.compilation.compiled.subagents?.w
    expect(sub).toMatchObject({ description: "d", max_depth: 4, max_subagents: 2 })
    expect(sub?.definition?.model).toEqual(result.compilation.compiled.model)
  })
})
