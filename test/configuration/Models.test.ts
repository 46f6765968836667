import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { ModelProviderConfigId } from "../../src/domain/shared/Ids.ts"
import { Models } from "../../src/services/configuration/Models.ts"
import { describeApp, expectFailure, ID_PATTERN, joinOrganization, newUser, rawRequest, type TestUser } from "../support/TestApp.ts"

const reasoningModel = (providerConfigId: ModelProviderConfigId) => ({
  provider_config_id: providerConfigId,
  name: "Sonnet",
  provider_model_slug: "claude-sonnet-4-5",
  context_window_tokens: 200_000,
  max_output_tokens: 64_000,
  supports_tools: true,
  supports_reasoning: true,
  input_modalities: ["text", "image"],
  output_modalities: ["text"]
})

/** An owner with an organization and a provider config. */
const setUp = (label: string) =>
  Effect.gen(function*() {
    const owner = yield* newUser("owner")
    const org = yield* owner.client.organizations.create({ payload: { name: label } })
    const provider = yield* owner.client.modelProviderConfigs.create({
      params: { orgID: org.id },
      payload: { name: "Anthropic", api_format: "anthropic-messages", base_url: "https://api.anthropic.com/v1" }
    })
    return { owner, org, provider }
  })

const postModel = (user: TestUser, orgId: string, body: unknown) =>
  rawRequest(
    HttpClientRequest.post(`/v1/orgs/${orgId}/models`).pipe(
      HttpClientRequest.bearerToken(user.token),
      HttpClientRequest.bodyJsonUnsafe(body)
    )
  )

const patchModel = (user: TestUser, orgId: string, modelId: string, body: unknown) =>
  rawRequest(
    HttpClientRequest.patch(`/v1/orgs/${orgId}/models/${modelId}`).pipe(
      HttpClientRequest.bearerToken(user.token),
      HttpClientRequest.bodyJsonUnsafe(body)
    )
  )

describeApp()("configured models", (it) => {
  it.effect("create with defaults; every PATCH is a new immutable revision", () =>
    Effect.gen(function*() {
      const { org, owner, provider } = yield* setUp("Models")
      const created = yield* owner.client.models.create({ params: { orgID: org.id }, payload: reasoningModel(provider.id) })
      expect(created.id).toMatch(ID_PATTERN("mdl"))
      expect(created.current_revision_id).toMatch(ID_PATTERN("mrev"))
      expect(created).toMatchObject({
        org_id: org.id,
        provider_config_id: provider.id,
        provider_config: "Anthropic",
        name: "Sonnet",
        provider_model_slug: "claude-sonnet-4-5",
        api_variant: "default",
        context_window_tokens: 200_000,
        max_output_tokens: 64_000,
        default_max_output_tokens: null,
        default_cache_retention: "short",
        supports_tools: true,
        supports_reasoning: true,
        default_reasoning_effort: "medium",
        supported_reasoning_efforts: ["low", "medium", "high"],
        input_modalities: ["text", "image"],
        output_modalities: ["text"]
      })
      const path = { orgID: org.id, modelID: created.id }

      const patched = yield* owner.client.models.update({
        params: path,
        payload: { provider_model_slug: "claude-sonnet-4-6", default_max_output_tokens: 8_000, default_cache_retention: "long" }
      })
      expect(patched.current_revision_id).not.toBe(created.current_revision_id)
      expect(patched).toMatchObject({
        id: created.id,
        provider_model_slug: "claude-sonnet-4-6",
        default_max_output_tokens: 8_000,
        default_cache_retention: "long",
        max_output_tokens: 64_000,
        context_window_tokens: 200_000
      })
      const renamed = yield* owner.client.models.update({ params: path, payload: { name: "Sonnet latest" } })
      expect(renamed.name).toBe("Sonnet latest")
      expect(renamed.provider_model_slug).toBe("claude-sonnet-4-6")

      const revisions = yield* owner.client.models.revisions({ params: path, query: {} })
      expect(revisions.data.map((r) => r.id)).toEqual(
        [renamed.current_revision_id, patched.current_revision_id, created.current_revision_id]
      )
      const first = revisions.data[2]
      expect(first).toMatchObject({ model_id: created.id, provider_model_slug: "claude-sonnet-4-5", default_cache_retention: "short" })
      // Pages walk newest first too.
      const page1 = yield* owner.client.models.revisions({ params: path, query: { limit: 2 } })
      expect(page1.has_more).toBe(true)
      const page2 = yield* owner.client.models.revisions({ params: path, query: { limit: 2, cursor: page1.next_cursor! } })
      expect([...page1.data, ...page2.data].map((r) => r.id)).toEqual(revisions.data.map((r) => r.id))
      expect(page2.has_more).toBe(false)

      expect((yield* owner.client.models.get({ params: path })).current_revision_id).toBe(renamed.current_revision_id)

      // Reasoning switched off without naming efforts: the efforts fall back to "none".
      const plain = yield* owner.client.models.update({ params: path, payload: { supports_reasoning: false } })
      expect(plain).toMatchObject({ supports_reasoning: false, supported_reasoning_efforts: [], default_reasoning_effort: "none" })
      const back = yield* owner.client.models.update({
        params: path,
        payload: { supports_reasoning: true, supported_reasoning_efforts: ["minimal", "high"] }
      })
      expect(back).toMatchObject({ supported_reasoning_efforts: ["minimal", "high"], default_reasoning_effort: "minimal" })

      yield* owner.client.models.remove({ params: path })
      expect((yield* expectFailure(owner.client.models.get({ params: path })))._tag).toBe("NotFound")
      expect((yield* expectFailure(owner.client.models.revisions({ params: path, query: {} })))._tag).toBe("NotFound")
    }))

  it.effect("names are unique per provider config; list filters by provider config", () =>
    Effect.gen(function*() {
      const { org, owner, provider } = yield* setUp("Names")
      const other = yield* owner.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { name: "Proxy", api_format: "openai-chat-completions", base_url: "http://127.0.0.1:4000/v1" }
      })
      const a = yield* owner.client.models.create({ params: { orgID: org.id }, payload: reasoningModel(provider.id) })
      const duplicate = yield* expectFailure(
        owner.client.models.create({ params: { orgID: org.id }, payload: reasoningModel(provider.id) })
      )
      expect(duplicate._tag).toBe("Conflict")
      const b = yield* owner.client.models.create({ params: { orgID: org.id }, payload: reasoningModel(other.id) })
      const c = yield* owner.client.models.create({
        params: { orgID: org.id },
        payload: { ...reasoningModel(provider.id), name: "Haiku" }
      })
      const renameClash = yield* expectFailure(
        owner.client.models.update({ params: { orgID: org.id, modelID: c.id }, payload: { name: "Sonnet" } })
      )
      expect(renameClash._tag).toBe("Conflict")
      // The refused rename left no revision behind.
      expect((yield* owner.client.models.revisions({ params: { orgID: org.id, modelID: c.id }, query: {} })).data).toHaveLength(1)

      const all = yield* owner.client.models.list({ params: { orgID: org.id }, query: {} })
      expect(all.data.map((m) => m.id)).toEqual([a.id, b.id, c.id])
      const filtered = yield* owner.client.models.list({ params: { orgID: org.id }, query: { provider_config_id: other.id } })
      expect(filtered.data.map((m) => m.id)).toEqual([b.id])
      expect(filtered.data[0].provider_config).toBe("Proxy")
    }))

  it.effect("validation errors are invalid_request naming the field", () =>
    Effect.gen(function*() {
      const { org, owner, provider } = yield* setUp("Validation")
      const stranger = yield* setUp("Stranger")
      const base = reasoningModel(provider.id)
      for (
        const [body, path] of [
          [{ ...base, context_window_tokens: 0 }, "/context_window_tokens"],
          [{ ...base, context_window_tokens: 1.5 }, "/context_window_tokens"],
          [{ ...base, max_output_tokens: 300_000 }, "/max_output_tokens"],
          [{ ...base, default_max_output_tokens: 65_000 }, "/default_max_output_tokens"],
          [{ ...base, max_output_tokens: null, default_max_output_tokens: 200_001 }, "/default_max_output_tokens"],
          [{ ...base, default_reasoning_effort: "extreme" }, "/default_reasoning_effort"],
          [{ ...base, supported_reasoning_efforts: [] }, "/supported_reasoning_efforts"],
          [{ ...base, supports_reasoning: false, supported_reasoning_efforts: ["low"] }, "/supported_reasoning_efforts"],
          [{ ...base, default_cache_retention: "forever" }, "/default_cache_retention"],
          [{ ...base, input_modalities: [] }, "/input_modalities"],
          [{ ...base, output_modalities: [1] }, "/output_modalities/0"],
          [{ ...base, name: "" }, "/name"],
          [{ ...base, temperature: 0.2 }, "/temperature"],
          [{ ...base, provider_config_id: stranger.provider.id }, "/provider_config_id"]
        ] as const
      ) {
        const response = yield* postModel(owner, org.id, body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.json, JSON.stringify(body)).toMatchObject({ code: "invalid_request", issues: [{ path }] })
      }
      const { supports_tools: _, ...missing } = base
      expect((yield* postModel(owner, org.id, missing)).json).toMatchObject({
        code: "invalid_request",
        issues: [{ path: "/supports_tools" }]
      })

      const created = yield* owner.client.models.create({ params: { orgID: org.id }, payload: base })
      const badPatch = yield* patchModel(owner, org.id, created.id, { context_window_tokens: 1_000 })
      expect(badPatch.status).toBe(400)
      expect(badPatch.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/max_output_tokens" }] })
      const unknown = yield* patchModel(owner, org.id, created.id, { provider_config_id: provider.id })
      expect(unknown.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/provider_config_id" }] })
      const revisions = yield* owner.client.models.revisions({ params: { orgID: org.id, modelID: created.id }, query: {} })
      expect(revisions.data.map((r) => r.id)).toEqual([created.current_revision_id])
    }))

  it.effect("roles and tenant isolation", () =>
    Effect.gen(function*() {
      const { org, owner, provider } = yield* setUp("Roles")
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "member")
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "P" } })
      const created = yield* owner.client.models.create({ params: { orgID: org.id }, payload: reasoningModel(provider.id) })
      const path = { orgID: org.id, modelID: created.id }

      expect((yield* member.client.models.get({ params: path })).id).toBe(created.id)
      expect((yield* member.client.models.list({ params: { orgID: org.id }, query: {} })).data).toHaveLength(1)
      expect((yield* member.client.models.revisions({ params: path, query: {} })).data).toHaveLength(1)
      const forbidden = [
        yield* expectFailure(member.client.models.create({ params: { orgID: org.id }, payload: { ...reasoningModel(provider.id), name: "M" } })),
        yield* expectFailure(member.client.models.update({ params: path, payload: { name: "M" } })),
        yield* expectFailure(member.client.models.remove({ params: path })),
        yield* expectFailure(member.client.models.createGrant({ params: path, payload: { target_project_id: project.id } }))
      ]
      expect(forbidden.map((e) => e._tag)).toEqual(["Forbidden", "Forbidden", "Forbidden", "Forbidden"])

      const stranger = yield* setUp("Elsewhere")
      const foreignPath = { orgID: stranger.org.id, modelID: created.id }
      const notFound = [
        yield* expectFailure(stranger.owner.client.models.get({ params: path })),
        yield* expectFailure(stranger.owner.client.models.get({ params: foreignPath })),
        yield* expectFailure(stranger.owner.client.models.update({ params: foreignPath, payload: { name: "Mine" } })),
        yield* expectFailure(stranger.owner.client.models.remove({ params: foreignPath })),
        yield* expectFailure(stranger.owner.client.models.revisions({ params: foreignPath, query: {} })),
        yield* expectFailure(stranger.owner.client.models.listGrants({ params: foreignPath, query: {} }))
      ]
      expect(notFound.map((e) => e._tag)).toEqual(Array(6).fill("NotFound"))
      expect((yield* owner.client.models.get({ params: path })).name).toBe("Sonnet")
    }))

  it.effect("grants decide which projects resolve a model", () =>
    Effect.gen(function*() {
      const { org, owner, provider } = yield* setUp("Grants")
      const stranger = yield* setUp("Other")
      const foreignProject = yield* stranger.owner.client.projects.create({ params: { orgID: stranger.org.id }, payload: { name: "F" } })
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Granted" } })
      const otherProject = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Not granted" } })
      const created = yield* owner.client.models.create({ params: { orgID: org.id }, payload: reasoningModel(provider.id) })
      const path = { orgID: org.id, modelID: created.id }
      const models = yield* Models
      const resolve = (projectId: typeof project.id, providerName = "Anthropic", modelName = "Sonnet") =>
        models.resolveForProject(org.id, projectId, providerName, modelName)

      expect(Option.isNone(yield* resolve(project.id))).toBe(true)
      const grant = yield* owner.client.models.createGrant({ params: path, payload: { target_project_id: project.id } })
      expect(grant.id).toMatch(ID_PATTERN("mdlgrant"))
      expect(grant).toMatchObject({ org_id: org.id, model_id: created.id, target_project_id: project.id })

      const resolved = yield* resolve(project.id)
      expect(Option.getOrThrow(resolved)).toEqual({
        providerConfig: {
          id: provider.id,
          name: "Anthropic",
          apiFormat: "anthropic-messages",
          baseUrl: "https://api.anthropic.com/v1",
          authSecretId: null
        },
        model: { id: created.id, name: "Sonnet" },
        revision: {
          id: created.current_revision_id,
          providerModelSlug: "claude-sonnet-4-5",
          apiVariant: "default",
          contextWindowTokens: 200_000,
          maxOutputTokens: 64_000,
          defaultMaxOutputTokens: null,
          defaultCacheRetention: "short",
          supportsTools: true,
          supportsReasoning: true,
          defaultReasoningEffort: "medium",
          supportedReasoningEfforts: ["low", "medium", "high"],
          inputModalities: ["text", "image"],
          outputModalities: ["text"]
        }
      })
      expect(Option.isNone(yield* resolve(otherProject.id))).toBe(true)
      expect(Option.isNone(yield* resolve(project.id, "OpenAI"))).toBe(true)
      expect(Option.isNone(yield* resolve(project.id, "Anthropic", "Opus"))).toBe(true)
      expect(Option.isNone(yield* models.resolveForProject(stranger.org.id, project.id, "Anthropic", "Sonnet"))).toBe(true)

      // `current` follows the newest revision, and says whether the project has the model's grant.
      const patched = yield* owner.client.models.update({ params: path, payload: { provider_model_slug: "claude-sonnet-5" } })
      const current = yield* models.current(created.id, project.id)
      expect(current.model.revision).toMatchObject({ id: patched.current_revision_id, providerModelSlug: "claude-sonnet-5" })
      expect(current.granted).toBe(true)
      expect((yield* models.current(created.id, otherProject.id)).granted).toBe(false)
      expect(Option.getOrThrow(yield* resolve(project.id)).revision.id).toBe(patched.current_revision_id)

      const twice = yield* expectFailure(owner.client.models.createGrant({ params: path, payload: { target_project_id: project.id } }))
      expect(twice._tag).toBe("Conflict")
      const foreign = yield* expectFailure(
        owner.client.models.createGrant({ params: path, payload: { target_project_id: foreignProject.id } })
      )
      expect(foreign).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/target_project_id" }] })
      const grants = yield* owner.client.models.listGrants({ params: path, query: {} })
      expect(grants.data.map((g) => g.id)).toEqual([grant.id])

      yield* owner.client.models.removeGrant({ params: { ...path, grantID: grant.id } })
      expect(Option.isNone(yield* resolve(project.id))).toBe(true)
      expect((yield* models.current(created.id, project.id)).granted).toBe(false)
      expect((yield* expectFailure(owner.client.models.removeGrant({ params: { ...path, grantID: grant.id } })))._tag)
        .toBe("NotFound")

      yield* owner.client.models.remove({ params: path })
      expect((yield* expectFailure(models.current(created.id, project.id)))._tag).toBe("NotFound")
    }))
})
