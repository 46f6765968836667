/**
 * Agent configs (docs/agent-configs.md): parse the source with positions,
 * validate it, resolve its names for the project, compile, and store it once per distinct
 * (project, source, effective definition). Configs are immutable; their `model` is rendered at
 * response time from the configured model's current revision (AgentConfigModel.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import { AgentConfig, type CreateAgentConfig } from "../../domain/configuration/agent-config/AgentConfig.ts"
import { canonicalJson } from "../../domain/configuration/agent-config/Canonical.ts"
import { compile } from "../../domain/configuration/agent-config/Compile.ts"
import { urlsOf } from "../../domain/configuration/agent-config/Urls.ts"
import type { JsonValue } from "../../domain/configuration/agent-config/Definition.ts"
import type { ResolvedModel } from "../../domain/configuration/Models.ts"
import { referencesOf } from "../../domain/configuration/agent-config/References.ts"
import { parseSource } from "../../domain/configuration/agent-config/Source.ts"
import { sortIssues, validateDefinition } from "../../domain/configuration/agent-config/Validate.ts"
import { deletedMeanwhile, InvalidRequest, type Issue, NotFound, ValidationFailed } from "../../domain/shared/Errors.ts"
import { AgentConfigId, type OrgId, type ProjectId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { someOrFail } from "../shared/Failures.ts"
import { sha256 } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { NetworkPolicy } from "../shared/NetworkPolicy.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access, projectNotFound } from "../tenancy/Access.ts"
import { ProjectsRepository } from "../tenancy/ProjectsRepository.ts"
import { renderModel } from "./AgentConfigModel.ts"
import { AgentConfigNames } from "./AgentConfigNames.ts"
import { AgentConfigsRepository, type StoredAgentConfig } from "./AgentConfigsRepository.ts"
import { Models } from "./Models.ts"

/** How many of a source's issues a response lists (the error sentence gives how many there are). */
const MAX_LISTED_SOURCE_ISSUES = 100

const invalid = (unsorted: ReadonlyArray<Issue>) => {
  const issues = sortIssues(unsorted)
  return new ValidationFailed({
    error: `The agent config source has ${issues.length} problem${issues.length === 1 ? "" : "s"}` +
      (issues.length > MAX_LISTED_SOURCE_ISSUES ? ` (the first ${MAX_LISTED_SOURCE_ISSUES} are listed in issues)` : "") + ": " +
      issues.slice(0, 5).map((issue) =>
        `${issue.path || "document"} (line ${issue.line}, column ${issue.column}): ${issue.message}`
      ).join("; ") + (issues.length > 5 ? "; ..." : ""),
    issues: issues.slice(0, MAX_LISTED_SOURCE_ISSUES)
  })
}

/** The source as text: an object source is checked, and positioned, as its canonical JSON, which is what is stored. */
const sourceText = (input: CreateAgentConfig) =>
  typeof input.source === "string"
    ? Effect.succeed(input.source)
    : input.source_format === "json"
    ? Effect.succeed(canonicalJson(input.source as JsonValue))
    : Effect.fail(
      new InvalidRequest({
        error: "An object source needs source_format json; send YAML as text",
        issues: [{ path: "/source_format", message: "must be json when source is an object" }]
      })
    )

const make = Effect.gen(function*() {
  const configs = yield* AgentConfigsRepository
  const names = yield* AgentConfigNames
  const models = yield* Models
  const access = yield* Access
  const projects = yield* ProjectsRepository
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions
  const network = yield* NetworkPolicy

  /** The config as the API shows it, its model rendered from `current`, the model's current revision. */
  const renderWith = (stored: StoredAgentConfig, current: ResolvedModel) => {
    const { configured_model_id: _, model_overrides, ...config } = stored
    return new AgentConfig({ ...config, model: renderModel(current, model_overrides) })
  }

  const render = (stored: StoredAgentConfig) =>
    Effect.map(
      Effect.orDie(models.current(stored.configured_model_id, stored.project_id)),
      (current) => renderWith(stored, current.model)
    )

  /** The config of the source, and whether this request made it (201) or found it (200). */
  const create = (orgId: OrgId, projectId: ProjectId, input: CreateAgentConfig) =>
    Effect.gen(function*() {
      yield* access.requireProjectAccess(orgId, projectId, "write")
      const text = yield* sourceText(input)
      const parsed = parseSource(text, input.source_format)
      if (parsed._tag === "SyntaxError") return yield* Effect.fail(invalid(parsed.issues))
      const validated = validateDefinition(parsed.source)
      if (validated._tag === "Invalid") return yield* Effect.fail(invalid(validated.issues))
      const definition = validated.definition
      const refusedUrls = urlsOf(definition).flatMap(({ path, url }) => {
        const problem = network.literalProblem(url)
        return problem === undefined ? [] : [parsed.source.issueAt(path, problem)]
      })
      if (refusedUrls.length > 0) return yield* Effect.fail(invalid(refusedUrls))

      const userId = yield* access.callerUserId
      const resolutions = yield* names.resolve(orgId, projectId, userId, referencesOf(definition))
      const result = compile(definition, resolutions, parsed.source.issueAt)
      if (result._tag === "Invalid") {
        // The project's deletion takes its grants with it: a name that stopped resolving because
        // the project was deleted after the access check is that deletion, not the source's fault.
        if (Option.isNone(yield* projects.findInOrg(orgId, projectId))) return yield* Effect.fail(deletedMeanwhile())
        return yield* Effect.fail(invalid(result.issues))
      }
      const { compiled, model, modelOverrides, resolved } = result.compilation

      const source = input.source_format === "yaml" ? text : canonicalJson(parsed.source.value as JsonValue)
      const sourceHash = sha256(`${input.source_format}\n${source}`)
      const effectiveHash = sha256(canonicalJson({ definition: parsed.source.value as JsonValue, resolved }))
      const modelIds = Array.from(
        new Set(
          [model.model.id, ...Object.values(compiled.subagents ?? {}).flatMap((sub) =>
            sub.definition === undefined ? [] : [sub.definition.model.configured_model_id]
          )]
        )
      )
      const inserted = yield* transaction(configs.insert({
        id: yield* ids.make(AgentConfigId),
        org_id: orgId,
        project_id: projectId,
        source,
        source_format: input.source_format,
        source_hash: sourceHash,
        effective_definition_hash: effectiveHash,
        instruction_hash: sha256(definition.instruction),
        configured_model_id: model.model.id,
        model_overrides: modelOverrides,
        compiled_definition: compiled
      }, modelIds))
      // The model just resolved is the config's model at its current revision: the effective
      // hash covers what each name resolved to, so a config found by it uses the same model.
      if (Option.isSome(inserted)) return { config: renderWith(inserted.value, model), created: true }
      const existing = yield* configs.findByContent(projectId, sourceHash, effectiveHash).pipe(
        someOrFail(() => projectNotFound(projectId))
      )
      return { config: renderWith(existing, model), created: false }
    })

  const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery) =>
    Effect.andThen(
      access.projectAccess(orgId, projectId),
      paged(
        listOf("agent configs", projectId),
        query,
        (keyset) => Effect.flatMap(configs.page(projectId, keyset), Effect.forEach(render)),
        (c) => c.id
      )
    )

  const get = (orgId: OrgId, projectId: ProjectId, configId: AgentConfigId) =>
    Effect.gen(function*() {
      yield* access.projectAccess(orgId, projectId)
      const stored = yield* configs.findInProject(projectId, configId).pipe(
        someOrFail(() => new NotFound({ error: `Agent config ${configId} not found` }))
      )
      return yield* render(stored)
    })

  return { create, list, get } as const
})

export class AgentConfigs extends Context.Service<AgentConfigs, Effect.Success<typeof make>>()("AgentConfigs") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      NetworkPolicy.layer,
      AgentConfigsRepository.layer,
      AgentConfigNames.layer,
      Models.layer,
      Access.layer,
      ProjectsRepository.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
