import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { describeApp, expectFailure, newUser, rawRequest, type TestUser, clientWith } from "../support/TestApp.ts"

const DEFAULTS = { notifications: { email: { enabled: false }, sms: { enabled: false } } }

/** A PATCH at the path the workspace routes use, with any body. */
const patchRaw = (user: TestUser, body: unknown) =>
  rawRequest(
    HttpClientRequest.patch("/api/v1/user/settings").pipe(
      HttpClientRequest.bearerToken(user.token),
      HttpClientRequest.bodyJsonUnsafe(body)
    )
  )

/** A user in an organization whose provider config `Anthropic` has the model `Sonnet`. */
const userWithModel = Effect.gen(function*() {
  const user = yield* newUser("coder")
  const org = yield* user.client.organizations.create({ payload: { name: "Models" } })
  const provider = yield* user.client.modelProviderConfigs.create({
    params: { orgID: org.id },
    payload: { name: "Anthropic", api_format: "anthropic-messages", base_url: "https://api.anthropic.com/v1" }
  })
  yield* user.client.models.create({
    params: { orgID: org.id },
    payload: {
      provider_config_id: provider.id,
      name: "Sonnet",
      provider_model_slug: "claude-sonnet-4-5",
      context_window_tokens: 200_000,
      supports_tools: true,
      supports_reasoning: true,
      input_modalities: ["text"],
      output_modalities: ["text"]
    }
  })
  return { user, org }
})

describeApp()("user settings", (it) => {
  it.effect("a new user has the defaults, at /api/v1 and /v1 alike", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      expect(yield* client.userSettings.get()).toEqual(DEFAULTS)
      const raw = yield* rawRequest(HttpClientRequest.get("/api/v1/user/settings").pipe(HttpClientRequest.bearerToken(token)))
      expect(raw.status).toBe(200)
      expect(raw.json).toEqual(DEFAULTS)
    }))

  it.effect("PATCH deep-merges onto the stored document and answers all of it", () =>
    Effect.gen(function*() {
      const { user } = yield* userWithModel
      const first = yield* user.client.userSettings.update({
        payload: {
          notifications: { mobile: { mode: "needs_attention" }, email: { enabled: true, notification_email: "me@example.test" } },
          code: { mode: "accept_edits", providers: { Anthropic: { model: "Sonnet", thinking: "high" } }, default_provider: "Anthropic" }
        }
      })
      expect(first).toEqual({
        notifications: {
          mobile: { mode: "needs_attention" },
          email: { enabled: true, notification_email: "me@example.test" },
          sms: { enabled: false }
        },
        code: { mode: "accept_edits", providers: { Anthropic: { model: "Sonnet", thinking: "high" } }, default_provider: "Anthropic" }
      })
      const second = yield* user.client.userSettings.update({
        payload: {
          notifications: { sms: { phone_number: "+14155550123" } },
          git: { default_worktree_mode: "REMOTE" },
          code: { providers: { Anthropic: { thinking: "low" } } },
          voice: { language: "pt-BR" }
        }
      })
      const expected = {
        notifications: {
          mobile: { mode: "needs_attention" },
          email: { enabled: true, notification_email: "me@example.test" },
          sms: { enabled: false, phone_number: "+14155550123" }
        },
        git: { default_worktree_mode: "REMOTE" },
        code: { mode: "accept_edits", providers: { Anthropic: { model: "Sonnet", thinking: "low" } }, default_provider: "Anthropic" },
        voice: { language: "pt-BR" }
      }
      expect(second).toEqual(expected)
      expect(yield* user.client.userSettings.get()).toEqual(expected)
      // An empty patch changes nothing.
      expect(yield* user.client.userSettings.update({ payload: {} })).toEqual(expected)
    }))

  it.effect("null removes a key; a defaulted key comes back as its default", () =>
    Effect.gen(function*() {
      const { user } = yield* userWithModel
      yield* user.client.userSettings.update({
        payload: {
          notifications: { email: { enabled: true, notification_email: "me@example.test" } },
          code: { mode: "plan", providers: { Anthropic: { model: "Sonnet" } }, default_provider: "Anthropic" },
          voice: { language: "en" }
        }
      })
      const after = yield* user.client.userSettings.update({
        payload: {
          notifications: { email: { enabled: null } },
          code: { default_provider: null, providers: { Anthropic: null } },
          voice: null
        }
      })
      expect(after).toEqual({
        notifications: { email: { enabled: false, notification_email: "me@example.test" }, sms: { enabled: false } },
        code: { mode: "plan", providers: {} }
      })
      expect(yield* user.client.userSettings.update({ payload: { notifications: null, code: null } })).toEqual(DEFAULTS)
    }))

  it.effect("a bad value of each enumeration is invalid_request at its path", () =>
    Effect.gen(function*() {
      const user = yield* newUser()
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ notifications: { mobile: { mode: "sometimes" } } }, "/notifications/mobile/mode"],
        [{ git: { default_worktree_mode: "local" } }, "/git/default_worktree_mode"],
        [{ code: { mode: "yolo" } }, "/code/mode"],
        [{ code: { providers: { Anthropic: { thinking: "max" } } } }, "/code/providers/Anthropic/thinking"],
        [{ voice: { language: "English" } }, "/voice/language"],
        [{ notifications: { email: { enabled: "yes" } } }, "/notifications/email/enabled"],
        [{ notifications: { email: { notification_email: "nobody" } } }, "/notifications/email/notification_email"],
        [{ notifications: { sms: { phone_number: "555-0123" } } }, "/notifications/sms/phone_number"],
        [{ code: { default_provider: "Anthropic" } }, "/code/default_provider"],
        [{ code: { default_provider: "toString" } }, "/code/default_provider"],
        [{ code: { default_provider: "" } }, "/code/default_provider"],
        [{ code: { providers: { ["x".repeat(65)]: { thinking: "low" } } } }, "/code/providers/" + "x".repeat(65)],
        [JSON.parse(`{"code": {"providers": {"__proto__": {"thinking": "low"}}}}`), "/code/providers/__proto__"],
        [{ code: { providers: [] } }, "/code/providers"],
        [{ notifications: "all" }, "/notifications"],
        [{ notifications: { email: { enabled: true } } }, "/notifications/email/notification_email"],
        [{ notifications: { sms: { enabled: true } } }, "/notifications/sms/phone_number"]
      ]
      for (const [body, path] of cases) {
        const response = yield* patchRaw(user, body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.json!.code).toBe("invalid_request")
        expect((response.json!.issues as Array<{ path: string }>).map((issue) => issue.path), JSON.stringify(body))
          .toEqual([path])
      }
      // Nothing was stored by the refused patches.
      expect(yield* user.client.userSettings.get()).toEqual(DEFAULTS)
    }))

  it.effect("unknown keys are refused at every level", () =>
    Effect.gen(function*() {
      const user = yield* newUser()
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ theme: "dark" }, "/theme"],
        [{ notifications: { push: {} } }, "/notifications/push"],
        [{ notifications: { email: { address: "me@example.test" } } }, "/notifications/email/address"],
        [{ code: { providers: { Anthropic: { model: "Sonnet", temperature: 1 } } } }, "/code/providers/Anthropic/temperature"],
        [{ voice: { language: "en", speed: 2 } }, "/voice/speed"]
      ]
      for (const [body, path] of cases) {
        const response = yield* patchRaw(user, body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.json!.code).toBe("invalid_request")
        expect((response.json!.issues as Array<{ path: string }>).map((issue) => issue.path)).toContain(path)
      }
    }))

  it.effect("a provider's model must exist in one of the user's organizations", () =>
    Effect.gen(function*() {
      const { user } = yield* userWithModel
      const unknownModel = yield* patchRaw(user, { code: { providers: { Anthropic: { model: "Opus" } } } })
      expect(unknownModel.status).toBe(400)
      expect(unknownModel.json).toMatchObject({
        code: "invalid_request",
        issues: [{ path: "/code/providers/Anthropic/model", message: expect.stringContaining("Opus") }]
      })
      const unknownProvider = yield* patchRaw(user, { code: { providers: { "Open/AI": { model: "Sonnet" } } } })
      expect(unknownProvider.status).toBe(400)
      expect(unknownProvider.json).toMatchObject({ issues: [{ path: "/code/providers/Open~1AI" }] })
      // Another user's organization's models are not theirs to name.
      const stranger = yield* newUser("stranger")
      const foreign = yield* patchRaw(stranger, { code: { providers: { Anthropic: { model: "Sonnet" } } } })
      expect(foreign.status).toBe(400)
      expect(foreign.json).toMatchObject({ issues: [{ path: "/code/providers/Anthropic" }] })
      expect(yield* stranger.client.userSettings.get()).toEqual(DEFAULTS)
      // A provider entry without a model still names a provider config of the user's.
      const thinkingOnly = yield* patchRaw(stranger, { code: { providers: { Anthropic: { thinking: "low" } } } })
      expect(thinkingOnly.status).toBe(400)
      expect(thinkingOnly.json).toMatchObject({ issues: [{ path: "/code/providers/Anthropic" }] })
      expect(yield* user.client.userSettings.update({ payload: { code: { providers: { Anthropic: { thinking: "low" } } } } }))
        .toMatchObject({ code: { providers: { Anthropic: { thinking: "low" } } } })
      // Several problems are reported together, and nothing is stored.
      const several = yield* patchRaw(user, {
        notifications: { sms: { enabled: true } },
        code: { default_provider: "Nope", providers: { Anthropic: { model: "Opus" } } }
      })
      expect(several.status).toBe(400)
      expect((several.json!.issues as Array<{ path: string }>).map((issue) => issue.path).sort()).toEqual([
        "/code/default_provider",
        "/code/providers/Anthropic/model",
        "/notifications/sms/phone_number"
      ])
      expect(yield* user.client.userSettings.get()).toEqual({ ...DEFAULTS, code: { providers: { Anthropic: { thinking: "low" } } } })
    }))

  it.effect("a provider key no config has, the empty one too, is invalid_request at the key, naming the provider configs to use", () =>
    Effect.gen(function*() {
      const { org, user } = yield* userWithModel
      yield* user.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { name: "OpenAI", api_format: "openai-responses", base_url: "https://api.openai.com/v1" }
      })
      for (const key of ["", "Nope"]) {
        const message = `none of your organizations has a model provider config named ${JSON.stringify(key)}; ` +
          "name one of theirs: \"Anthropic\", \"OpenAI\""
        const response = yield* patchRaw(user, { code: { providers: { [key]: { thinking: "low" } } } })
        expect(response.status, key).toBe(400)
        expect(response.json, key).toEqual({
          code: "invalid_request",
          error: `The settings were not changed: /code/providers/${key} ${message}`,
          issues: [{ path: `/code/providers/${key}`, message }]
        })
      }
      // A user whose organizations have no provider config is told so.
      const stranger = yield* newUser("stranger")
      const none = yield* patchRaw(stranger, { code: { providers: { "": {} } } })
      expect(none.status).toBe(400)
      expect(none.json!.issues).toEqual([{
        path: "/code/providers/",
        message: "none of your organizations has a model provider config named \"\", nor any other: create one in an organization first"
      }])
      // Removing it is removing a provider that is not there: nothing changes.
      const removed = yield* patchRaw(user, { code: { providers: { "": null } } })
      expect(removed.status).toBe(200)
      expect(yield* user.client.userSettings.get()).toEqual({ ...DEFAULTS, code: { providers: {} } })
    }))

  it.effect("providers: more than 32 set at once is one issue at decode; the issues listed are at most 10", () =>
    Effect.gen(function*() {
      const { user } = yield* userWithModel
      const providers = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, {}]))
      const tooMany = yield* patchRaw(user, { code: { providers: providers(70_000) } })
      expect(tooMany.status).toBe(400)
      expect(tooMany.json).toEqual({
        code: "invalid_request",
        error: "The request body does not match the API: /code/providers: must configure at most 32 providers (got 70000)",
        issues: [{ path: "/code/providers", message: "must configure at most 32 providers (got 70000)", line: 1, column: 10 }]
      })
      // 32 providers none of the user's organizations has: 10 issues listed, the sentence counts the rest.
      const unknown = yield* patchRaw(user, { code: { providers: providers(32) } })
      expect(unknown.status).toBe(400)
      const issues = unknown.json!.issues as Array<{ path: string; message: string }>
      expect(issues).toHaveLength(10)
      expect(issues[0]).toEqual({
        path: "/code/providers/p0",
        message: "none of your organizations has a model provider config named \"p0\"; name one of theirs: \"Anthropic\""
      })
      expect(unknown.json!.error).toMatch(/^The settings were not changed: \/code\/providers\/p0 none of .* \(and 22 more\)$/)
      // Looked up together, each provider gets its own answer.
      const mixed = yield* patchRaw(user, {
        code: { providers: { Anthropic: { model: "Sonnet" }, Nope: {}, Other: { model: "Sonnet" } } }
      })
      expect(mixed.json!.issues).toEqual([
        { path: "/code/providers/Nope", message: "none of your organizations has a model provider config named \"Nope\"; name one of theirs: \"Anthropic\"" },
        { path: "/code/providers/Other", message: "none of your organizations has a model provider config named \"Other\"; name one of theirs: \"Anthropic\"" }
      ])
      const models = yield* patchRaw(user, { code: { providers: { Anthropic: { model: "Opus" } } } })
      expect(models.json!.issues).toEqual([{
        path: "/code/providers/Anthropic/model",
        message: "none of your organizations has a model named \"Opus\" under the provider config \"Anthropic\""
      }])
      expect(yield* user.client.userSettings.get()).toEqual(DEFAULTS)
      // Removing (null) is not configuring: a patch may remove any number.
      const removals = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, null]))
      const removed = yield* patchRaw(user, { code: { providers: removals } })
      expect(removed.status).toBe(200)
      expect(removed.json).toEqual({ ...DEFAULTS, code: { providers: {} } })
    }))

  it.effect("an organization API key is refused: settings belong to a person", () =>
    Effect.gen(function*() {
      const owner = yield* newUser()
      const org = yield* owner.client.organizations.create({ payload: { name: "Keys" } })
      const key = yield* owner.client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "ci", role: "admin" } })
      const asOrg = yield* clientWith(key.token)
      const read = yield* expectFailure(asOrg.userSettings.get())
      expect(read._tag).toBe("Forbidden")
      expect(read.message).toContain("personal API key")
      const write = yield* expectFailure(asOrg.userSettings.update({ payload: { voice: { language: "en" } } }))
      expect(write._tag).toBe("Forbidden")
      const raw = yield* rawRequest(
        HttpClientRequest.patch("/api/v1/user/settings").pipe(
          HttpClientRequest.bearerToken(key.token),
          HttpClientRequest.bodyJsonUnsafe({ voice: { language: "en" } })
        )
      )
      expect(raw.status).toBe(403)
      expect(raw.json!.code).toBe("forbidden")
      expect(yield* owner.client.userSettings.get()).toEqual(DEFAULTS)
    }))

  it.effect("two concurrent PATCHes both land", () =>
    Effect.gen(function*() {
      const { user } = yield* userWithModel
      const patches = [
        { voice: { language: "de" } },
        { git: { default_worktree_mode: "LOCAL" as const } },
        { code: { mode: "auto" as const } },
        { notifications: { mobile: { mode: "off" as const } } },
        { code: { providers: { Anthropic: { model: "Sonnet" } } } },
        { notifications: { sms: { phone_number: "+14155550123" } } }
      ]
      yield* Effect.forEach(patches, (payload) => user.client.userSettings.update({ payload }), { concurrency: "unbounded" })
      expect(yield* user.client.userSettings.get()).toEqual({
        notifications: { mobile: { mode: "off" }, email: { enabled: false }, sms: { enabled: false, phone_number: "+14155550123" } },
        git: { default_worktree_mode: "LOCAL" },
        code: { mode: "auto", providers: { Anthropic: { model: "Sonnet" } } },
        voice: { language: "de" }
      })
    }))

  it.effect("each user sees only their own settings", () =>
    Effect.gen(function*() {
      const alice = yield* newUser("alice")
      const bob = yield* newUser("bob")
      yield* alice.client.userSettings.update({ payload: { voice: { language: "fr" }, code: { mode: "plan" } } })
      expect(yield* bob.client.userSettings.get()).toEqual(DEFAULTS)
      expect(yield* bob.client.userSettings.update({ payload: { voice: { language: "es-419" } } })).toEqual({
        ...DEFAULTS,
        voice: { language: "es-419" }
      })
      expect(yield* alice.client.userSettings.get()).toEqual({ ...DEFAULTS, voice: { language: "fr" }, code: { mode: "plan" } })
    }))
})
