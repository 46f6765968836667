import { HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { ModelProviderConfigId } from "../../src/domain/shared/Ids.ts"
import { describeApp, expectFailure, ID_PATTERN, joinOrganization, newId, newUser, rawRequest } from "../support/TestApp.ts"

const openai = { name: "OpenAI", api_format: "openai-responses", base_url: "https://api.openai.com/v1" } as const

const model = (providerConfigId: ModelProviderConfigId) => ({
  provider_config_id: providerConfigId,
  name: "GPT",
  provider_model_slug: "gpt-5",
  context_window_tokens: 400_000,
  supports_tools: true,
  supports_reasoning: false,
  input_modalities: ["text"],
  output_modalities: ["text"]
})

describeApp()("model provider configs", (it) => {
  it.effect("lifecycle: create, get, list, patch, delete", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Providers" } })
      const key = yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "KEY", value: Redacted.make("sk") } })

      const created = yield* owner.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { ...openai, auth_secret_id: key.id, description: "main account" }
      })
      expect(created.id).toMatch(ID_PATTERN("mpc"))
      expect(created).toMatchObject({
        org_id: org.id,
        name: "OpenAI",
        api_format: "openai-responses",
        base_url: "https://api.openai.com/v1",
        auth_secret_id: key.id,
        description: "main account",
        management_kind: "tenant"
      })
      const path = { orgID: org.id, modelProviderConfigID: created.id }
      expect((yield* owner.client.modelProviderConfigs.get({ params: path })).name).toBe("OpenAI")
      const listed = yield* owner.client.modelProviderConfigs.list({ params: { orgID: org.id }, query: {} })
      expect(listed.data.map((c) => c.id)).toEqual([created.id])

      const patched = yield* owner.client.modelProviderConfigs.update({
        params: path,
        payload: { name: "OpenAI EU", base_url: "https://eu.api.openai.com/v1", description: null }
      })
      expect(patched).toMatchObject({
        name: "OpenAI EU",
        base_url: "https://eu.api.openai.com/v1",
        description: null,
        auth_secret_id: key.id,
        api_format: "openai-responses"
      })
      const switched = yield* owner.client.modelProviderConfigs.update({
        params: path,
        payload: { api_format: "openai-chat-completions", auth_secret_id: null }
      })
      expect(switched).toMatchObject({ api_format: "openai-chat-completions", auth_secret_id: null, name: "OpenAI EU" })

      const duplicate = yield* expectFailure(
        owner.client.modelProviderConfigs.create({ params: { orgID: org.id }, payload: { ...openai, name: "OpenAI EU" } })
      )
      expect(duplicate._tag).toBe("Conflict")

      yield* owner.client.modelProviderConfigs.remove({ params: path })
      expect((yield* expectFailure(owner.client.modelProviderConfigs.get({ params: path })))._tag).toBe("NotFound")
    }))

  it.effect("deletion is refused while models exist, and for cluster-managed configs", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Blocked" } })
      const config = yield* owner.client.modelProviderConfigs.create({ params: { orgID: org.id }, payload: openai })
      const path = { orgID: org.id, modelProviderConfigID: config.id }
      const created = yield* owner.client.models.create({ params: { orgID: org.id }, payload: model(config.id) })
      const blocked = yield* expectFailure(owner.client.modelProviderConfigs.remove({ params: path }))
      expect(blocked).toMatchObject({ _tag: "Conflict", error: expect.stringContaining(created.id) })
      yield* owner.client.models.remove({ params: { orgID: org.id, modelID: created.id } })
      yield* owner.client.modelProviderConfigs.remove({ params: path })

      // A cluster-managed config (installed by the operator, straight into the database) is read-only here.
      const sql = yield* SqlClient.SqlClient
      const clusterId = yield* newId(ModelProviderConfigId)
      yield* sql`
        INSERT INTO model_provider_configs (id, org_id, name, api_format, base_url, management_kind)
        VALUES (${clusterId}, ${org.id}, 'Cluster', 'anthropic-messages', 'https://api.anthropic.com/v1', 'cluster')`
      const clusterPath = { orgID: org.id, modelProviderConfigID: clusterId }
      expect((yield* owner.client.modelProviderConfigs.get({ params: clusterPath })).management_kind).toBe("cluster")
      expect((yield* expectFailure(owner.client.modelProviderConfigs.remove({ params: clusterPath })))._tag).toBe("Forbidden")
      const patch = yield* expectFailure(
        owner.client.modelProviderConfigs.update({ params: clusterPath, payload: { name: "Mine now" } })
      )
      expect(patch._tag).toBe("Forbidden")
    }))

  it.effect("roles and tenant isolation", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const member = yield* newUser("member")
      const stranger = yield* newUser("stranger")
      const org = yield* owner.client.organizations.create({ payload: { name: "Roles" } })
      yield* joinOrganization(owner, org.id, member, "member")
      const config = yield* owner.client.modelProviderConfigs.create({ params: { orgID: org.id }, payload: openai })
      const path = { orgID: org.id, modelProviderConfigID: config.id }

      expect((yield* member.client.modelProviderConfigs.get({ params: path })).id).toBe(config.id)
      const create = yield* expectFailure(
        member.client.modelProviderConfigs.create({ params: { orgID: org.id }, payload: { ...openai, name: "Other" } })
      )
      expect(create._tag).toBe("Forbidden")
      expect((yield* expectFailure(member.client.modelProviderConfigs.update({ params: path, payload: { name: "X" } })))._tag)
        .toBe("Forbidden")
      expect((yield* expectFailure(member.client.modelProviderConfigs.remove({ params: path })))._tag).toBe("Forbidden")

      const strangerOrg = yield* stranger.client.organizations.create({ payload: { name: "Elsewhere" } })
      expect((yield* expectFailure(stranger.client.modelProviderConfigs.get({ params: path })))._tag).toBe("NotFound")
      const viaOwnOrg = yield* expectFailure(
        stranger.client.modelProviderConfigs.get({ params: { orgID: strangerOrg.id, modelProviderConfigID: config.id } })
      )
      expect(viaOwnOrg._tag).toBe("NotFound")
      const removeViaOwnOrg = yield* expectFailure(
        stranger.client.modelProviderConfigs.remove({ params: { orgID: strangerOrg.id, modelProviderConfigID: config.id } })
      )
      expect(removeViaOwnOrg._tag).toBe("NotFound")
    }))

  it.effect("the credential must be a secret the caller can see in the organization", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const admin = yield* newUser("admin")
      const stranger = yield* newUser("stranger")
      const org = yield* owner.client.organizations.create({ payload: { name: "Creds" } })
      yield* joinOrganization(owner, org.id, admin, "admin")
      const otherOrg = yield* stranger.client.organizations.create({ payload: { name: "Other" } })
      const foreign = yield* stranger.client.secrets.create({ params: { orgID: otherOrg.id }, payload: { name: "K", value: Redacted.make("k") } })
      const adminsOwn = yield* admin.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "K", value: Redacted.make("k"), owner: "personal" }
      })

      const withForeign = yield* expectFailure(
        owner.client.modelProviderConfigs.create({ params: { orgID: org.id }, payload: { ...openai, auth_secret_id: foreign.id } })
      )
      expect(withForeign).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/auth_secret_id" }] })
      const withSomeoneElses = yield* expectFailure(
        owner.client.modelProviderConfigs.create({ params: { orgID: org.id }, payload: { ...openai, auth_secret_id: adminsOwn.id } })
      )
      expect(withSomeoneElses._tag).toBe("InvalidRequest")
      const byAdmin = yield* admin.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { ...openai, auth_secret_id: adminsOwn.id }
      })
      expect(byAdmin.auth_secret_id).toBe(adminsOwn.id)
      // The owner may edit the config without touching the admin's credential.
      const renamed = yield* owner.client.modelProviderConfigs.update({
        params: { orgID: org.id, modelProviderConfigID: byAdmin.id },
        payload: { name: "Renamed" }
      })
      expect(renamed.auth_secret_id).toBe(adminsOwn.id)
    }))

  it.effect("validation: api_format, base_url and unknown properties", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Valid" } })
      const post = (body: unknown) =>
        rawRequest(
          HttpClientRequest.post(`/v1/orgs/${org.id}/model-provider-configs`).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyJsonUnsafe(body)
          )
        )
      for (
        const [body, path] of [
          [{ ...openai, api_format: "openai" }, "/api_format"],
          [{ ...openai, base_url: "api.openai.com/v1" }, "/base_url"],
          [{ ...openai, base_url: "ftp://api.openai.com/v1" }, "/base_url"],
          [{ ...openai, base_url: "https://user:pw@api.openai.com/v1" }, "/base_url"],
          [{ ...openai, name: " padded" }, "/name"],
          [{ ...openai, auth_secret_id: "sec_123" }, "/auth_secret_id"],
          [{ ...openai, region: "eu" }, "/region"]
        ] as const
      ) {
        const response = yield* post(body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path }] })
      }
      const ok = yield* post({ ...openai, api_format: "anthropic-messages", base_url: "http://127.0.0.1:9999/v1" })
      expect(ok.status).toBe(201)
      expect(ok.json).toMatchObject({ org_id: org.id, management_kind: "tenant" })
    }))
})
