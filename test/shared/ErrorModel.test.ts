import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { describeApp, clientWith, expectFailure, newUser, rawRequest } from "../support/TestApp.ts"

const post = (path: string, token: string, body: string, contentType = "application/json") =>
  rawRequest(
    HttpClientRequest.post(path).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.bodyText(body, contentType)
    )
  )

describeApp()("error model", (it) => {
  it.effect("401 without a token, with a bad token, with a revoked token", () =>
    Effect.gen(function*() {
      const missing = yield* rawRequest(HttpClientRequest.get("/v1/user"))
      expect(missing.status).toBe(401)
      expect(missing.json).toEqual({ error: expect.any(String), code: "unauthorized" })

      const bad = yield* expectFailure((yield* clientWith("apk_not-a-real-key")).user.get())
      expect(bad._tag).toBe("Unauthorized")

      const user = yield* newUser()
      const key = yield* user.client.user.createApiKey({ payload: { name: "temporary" } })
      const withKey = yield* clientWith(key.token)
      expect((yield* withKey.user.get()).id).toBe(user.user.id)
      yield* user.client.user.deleteApiKey({ params: { keyID: key.id } })
      const revoked = yield* expectFailure(withKey.user.get())
      expect(revoked._tag).toBe("Unauthorized")
    }))

  it.effect("malformed JSON is 400 invalid_request with exactly error and code", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* post("/v1/orgs", token, "{\"name\":")
      expect(response.status).toBe(400)
      expect(Object.keys(response.json!).sort()).toEqual(["code", "error"])
      expect(response.json!.code).toBe("invalid_request")
    }))

  it.effect("a schema failure names the field in issues, without _tag", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* post("/v1/orgs", token, JSON.stringify({ title: "x" }))
      expect(response.status).toBe(400)
      expect(Object.keys(response.json!).sort()).toEqual(["code", "error", "issues"])
      expect(response.json).toMatchObject({
        code: "invalid_request",
        issues: [
          { path: "/title", message: "is not allowed here; allowed fields: name" },
          { path: "/name", message: "is required" }
        ]
      })
    }))

  it.effect("a body's issues say where in it they are: line and column of the property, the element, or the object missing a field", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const unknownField = yield* post("/v1/orgs", token, "{\n  \"title\": \"x\"\n}")
      expect(unknownField.json!.issues).toEqual([
        { path: "/title", message: "is not allowed here; allowed fields: name", line: 2, column: 3 },
        { path: "/name", message: "is required", line: 1, column: 1 }
      ])

      const org = yield* client.organizations.create({ payload: { name: "Positions" } })
      const provider = yield* client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { name: "p", api_format: "openai-responses", base_url: "https://models.example.test/v1" }
      })
      const model = [
        "{",
        `  "provider_config_id": "${provider.id}", "name": "m", "provider_model_slug": "m",`,
        "  \"context_window_tokens\": 1000, \"supports_tools\": true, \"supports_reasoning\": false,",
        "  \"input_modalities\": [\"text\", 5], \"output_modalities\": [\"text\"]",
        "}"
      ].join("\n")
      const element = yield* post(`/v1/orgs/${org.id}/models`, token, model)
      expect(element.status).toBe(400)
      expect(element.json!.issues).toEqual([expect.objectContaining({ path: "/input_modalities/1", line: 4, column: 32 })])

      // A query parameter is not in a document: its issue has no position.
      const query = yield* rawRequest(HttpClientRequest.get("/v1/orgs?limit=0").pipe(HttpClientRequest.bearerToken(token)))
      expect(query.json!.issues).toEqual([{ path: "/limit", message: expect.any(String) }])
    }))

  it.effect("a NUL character in any string of the body is 400 before anything is written", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Nul" } })
      const invitation = yield* post(
        `/v1/orgs/${org.id}/invitations`,
        token,
        "{\"email\":\"a\\u0000@example.test\",\"role\":\"member\"}"
      )
      expect(invitation.status).toBe(400)
      expect(invitation.json).toEqual({
        error: expect.stringContaining("NUL"),
        code: "invalid_request",
        issues: [{ path: "/email", message: expect.stringContaining("NUL") }]
      })
      expect((yield* client.invitations.list({ params: { orgID: org.id }, query: {} })).data).toEqual([])
      // An escaped backslash followed by "u0000" is ordinary text.
      const literal = yield* post("/v1/orgs", token, JSON.stringify({ name: "back\\u0000slash" }))
      expect(literal.status).toBe(201)
      expect(literal.json!.name).toBe("back\\u0000slash")
    }))

  it.effect("a body that is not application/json is 415", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* post("/v1/orgs", token, "name=x", "text/plain")
      expect(response.status).toBe(415)
      expect(response.json).toEqual({ error: expect.any(String), code: "unsupported_media_type" })
    }))

  it.effect("a body over 1 MiB is 413 and nothing is created", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const response = yield* post("/v1/orgs", token, JSON.stringify({ name: "x".repeat(1024 * 1024 + 1) }))
      expect(response.status).toBe(413)
      expect(response.json).toEqual({ error: expect.any(String), code: "request_too_large" })
      expect((yield* client.organizations.list({ query: {} })).data).toEqual([])
    }))

  it.effect("an unknown route is 404 not_found", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* rawRequest(HttpClientRequest.get("/v1/nothing-here").pipe(HttpClientRequest.bearerToken(token)))
      expect(response.status).toBe(404)
      expect(response.json).toEqual({ error: expect.any(String), code: "not_found" })
    }))

  it.effect("a malformed id in the path is 400 naming the parameter", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* rawRequest(HttpClientRequest.get("/v1/orgs/org_123").pipe(HttpClientRequest.bearerToken(token)))
      expect(response.status).toBe(400)
      expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/orgID" }] })
    }))

  it.effect("the same routes answer under /api/v1", () =>
    Effect.gen(function*() {
      const { token, user } = yield* newUser()
      const response = yield* rawRequest(HttpClientRequest.get("/api/v1/user").pipe(HttpClientRequest.bearerToken(token)))
      expect(response.status).toBe(200)
      expect(response.json).toMatchObject({ id: user.id, email: user.email })
    }))

  it.effect("every response carries x-request-id: the caller's, or a new one", () =>
    Effect.gen(function*() {
      const echoed = yield* rawRequest(HttpClientRequest.get("/healthz").pipe(HttpClientRequest.setHeader("x-request-id", "req-42")))
      expect(echoed.headers["x-request-id"]).toBe("req-42")
      const generated = yield* rawRequest(HttpClientRequest.get("/v1/user"))
      expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
    }))
})

describeApp()("resource names", (it) => {
  const rejected: ReadonlyArray<[string, string]> = [
    ["empty", ""],
    ["65 characters", "a".repeat(65)],
    ["leading whitespace", " Acme"],
    ["trailing whitespace", "Acme "],
    ["a control character", "Ac\u0007me"],
    ["a tab", "Ac\tme"],
    ["a zero-width space", "Ac\u200Bme"],
    ["a byte order mark", "\uFEFFAcme"],
    ["a line separator", "Ac\u2028me"],
    ["a zero-width joiner between letters", "Ac\u200Dme"],
    ["a leading zero-width joiner", "\u200D👨 team"],
    ["a trailing zero-width joiner", "team 👨\u200D"],
    ["a zero-width joiner between an emoji and a letter", "👨\u200Da team"],
    ["a doubled zero-width joiner in an emoji sequence", "👨\u200D\u200D👩 team"],
    ["only a Hangul filler, which displays as nothing", "\u3164"],
    ["a halfwidth Hangul filler between letters", "Ac\uFFA0me"],
    ["a combining grapheme joiner", "Ac\u034Fme"],
    ["only the blank Braille pattern, which displays as a space", "\u2800"],
    ["a leading variation selector", "\uFE0FAcme"],
    ["only a combining acute accent", "\u0301"],
    ["a leading combining mark", "\u0301Acme"]
  ]
  for (const [label, name] of rejected) {
    it.effect(`rejects ${label}`, () =>
      Effect.gen(function*() {
        const { token } = yield* newUser()
        const response = yield* post("/v1/orgs", token, JSON.stringify({ name }))
        expect(response.status).toBe(400)
        expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/name" }] })
      }))
  }

  it.effect("rejects a stray zero-width joiner in a project name, saying why", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Joiners" } })
      const response = yield* post(`/v1/orgs/${org.id}/projects`, token, JSON.stringify({ name: "we\u200Db" }))
      expect(response.status).toBe(400)
      expect(response.json).toMatchObject({
        code: "invalid_request",
        issues: [{ path: "/name", message: "must not contain invisible or control characters" }]
      })
    }))

  it.effect("accepts emoji joined by zero-width joiners, or with a variation selector, in organization and project names", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const names = ["👨\u200D👩\u200D👧 team", "👩🏽\u200D💻 devs", "❤️\u200D🔥", "🏳️\u200D🌈 pride", "run 🏃\u200D♀️", "I \u2764\uFE0F it"]
      for (const name of names) {
        const created = yield* post("/v1/orgs", token, JSON.stringify({ name }))
        expect(created.status, name).toBe(201)
        expect(created.json!.name).toBe(name)
      }
      const org = yield* client.organizations.create({ payload: { name: "Family" } })
      const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: names[0] } })
      expect(project.name).toBe(names[0])
      expect((yield* client.projects.get({ params: { orgID: org.id, projectID: project.id } })).name).toBe(names[0])
    }))

  it.effect("accepts spaces, punctuation, combining marks after a character and 64 characters of any script", () =>
    Effect.gen(function*() {
      const { client } = yield* newUser()
      // Combining marks after a character: vowel signs of Devanagari, a dot NFC does not compose with q.
      for (const name of ["Acme, Inc. (EU) — R&D!", "é".repeat(64), "組織".repeat(32), "हिन्दी टीम", "q\u0307 team"]) {
        expect((yield* client.organizations.create({ payload: { name } })).name).toBe(name)
      }
    }))

  it.effect("stores names NFC-normalized", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* post("/v1/orgs", token, JSON.stringify({ name: "Cafe\u0301" }))
      expect(response.status).toBe(201)
      expect(response.json!.name).toBe("Caf\u00e9")
    }))
})
