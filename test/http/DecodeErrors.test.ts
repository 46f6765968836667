/**
 * Requests that do not match the API, answered in the caller's words: what was expected, the
 * allowed values and fields, the schema's own message where it has one; never the value sent
 * (a secret sent in the wrong shape stays out of the answer), never a schema's internals.
 * Integers in queries and paths are plain decimal; unknown query parameters are refused.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { InteractionId, ModelProviderConfigId, SecretId } from "../../src/domain/shared/Ids.ts"
import { agentProject } from "../support/AgentProject.ts"
import { exchange } from "../support/RawHttp.ts"
import { describeApp, newId, newUser, rawRequest } from "../support/TestApp.ts"

const send = (method: "POST" | "PUT", path: string, token: string, body?: unknown) =>
  rawRequest(
    HttpClientRequest.make(method)(path).pipe(
      HttpClientRequest.bearerToken(token),
      body === undefined ? (request) => request : HttpClientRequest.bodyJsonUnsafe(body)
    )
  )

const get = (path: string, token: string) => rawRequest(HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(token)))

/** Nothing of Effect's own formatting: no schema printed, no value quoted. */
/** The issues' paths and messages, without their positions in the body. */
const inWords = (issues: unknown) =>
  (issues as ReadonlyArray<{ path: string; message: string }>).map(({ message, path }) => ({ path, message }))

const expectPlainWords = (text: string) => {
  for (const internal of ["Expected", "actual", "readonly", "_tag", "{ "]) expect(text).not.toContain(internal)
}

describeApp()("decode errors in the caller's words", (it) => {
  it.effect("a secret value of the wrong type is refused without being echoed, on create and on rotate", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Secrets" } })
      const secret = yield* client.secrets.create({ params: { orgID: org.id }, payload: { name: "api", value: Redacted.make("first") } })
      const value = "sk-live-do-not-echo-4242"
      const shapes: ReadonlyArray<unknown> = [[value], { key: value }, { nested: [value] }, 4242, true]
      for (const shape of shapes) {
        const created = yield* send("POST", `/v1/orgs/${org.id}/secrets`, token, { name: "leak", value: shape })
        const rotated = yield* send("PUT", `/v1/orgs/${org.id}/secrets/${secret.id}/value`, token, { value: shape })
        for (const response of [created, rotated]) {
          expect(response.status).toBe(400)
          expect(response.json).toMatchObject({
            code: "invalid_request",
            issues: [{ path: "/value", message: expect.stringContaining("expected a string") }]
          })
          expect(response.text).not.toContain(value)
          expect(response.text).not.toContain("4242")
          expectPlainWords(String(response.json!.error))
        }
      }
    }))

  it.effect("messages name what is expected: required fields, allowed fields and values, types, the schema's own message", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Words" } })
      const missing = yield* send("POST", `/v1/orgs/${org.id}/secrets`, token, { name: "a" })
      expect(missing.json).toEqual({
        error: "The request body does not match the API: /value: is required",
        code: "invalid_request",
        // Where in the body: the object that lacks the field (test/shared/ErrorModel.test.ts has the positions).
        issues: [{ path: "/value", message: "is required", line: 1, column: 1 }]
      })
      const extra = yield* send("POST", `/v1/orgs/${org.id}/secrets`, token, { name: "a", value: "v", colour: "red" })
      expect(inWords(extra.json!.issues)).toEqual([
        { path: "/colour", message: "is not allowed here; allowed fields: name, value, description, owner" }
      ])
      const long = yield* send("POST", "/v1/orgs", token, { name: "n".repeat(300) })
      expect(inWords(long.json!.issues)).toEqual([{ path: "/name", message: "must be at most 64 characters (got 300)" }])
      expect(long.text).not.toContain("n".repeat(65))
      const wrongType = yield* send("POST", "/v1/orgs", token, { name: 12 })
      expect(inWords(wrongType.json!.issues)).toEqual([{ path: "/name", message: "expected a string" }])
      // A nullable field: a string that breaks the field's rule gets the rule; another type, both kinds.
      const providers = `/v1/orgs/${org.id}/model-provider-configs`
      const provider = { name: "p", api_format: "openai-responses", base_url: "https://provider.example/v1" }
      const badId = yield* send("POST", providers, token, { ...provider, auth_secret_id: "sec_bad" })
      expect(inWords(badId.json!.issues)).toEqual([{ path: "/auth_secret_id", message: expect.stringContaining("sec_") }])
      expect(JSON.stringify(badId.json!.issues)).not.toContain("or null")
      const notString = yield* send("POST", providers, token, { ...provider, auth_secret_id: 7 })
      expect(inWords(notString.json!.issues)).toEqual([{ path: "/auth_secret_id", message: expect.stringContaining("or null") }])
      // An integer bounded twice (its safe range, then the field's own): the field's bounds are the ones told.
      const fraction = yield* send("POST", `/v1/orgs/${org.id}/models`, token, {
        provider_config_id: yield* newId(ModelProviderConfigId),
        name: "m",
        provider_model_slug: "m",
        context_window_tokens: 1.5,
        supports_tools: true,
        supports_reasoning: false,
        input_modalities: ["text"],
        output_modalities: ["text"]
      })
      expect(inWords(fraction.json!.issues)).toEqual([
        { path: "/context_window_tokens", message: "expected an integer between 1 and 2147483647" }
      ])
      const pool = yield* send("POST", `/v1/orgs/${org.id}/machine-pools`, token, {
        name: "p",
        provider: "local",
        provider_auth_secret_id: yield* newId(SecretId),
        default_machine_provider_options: {},
        max_total_machines: 1.5,
        delete_after_idle_minutes: 0
      })
      expect(inWords(pool.json!.issues)).toEqual([
        { path: "/max_total_machines", message: "expected an integer between 1 and 2147483647" },
        { path: "/delete_after_idle_minutes", message: "must be an integer from 5 to 2147483647" }
      ])

      const { config, owner, projectPath } = yield* agentProject()
      const decision = yield* send(
        "POST",
        `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/interactions/${yield* newId(InteractionId)}/resolve`,
        owner.token,
        { decision: "yes" }
      )
      expect(inWords(decision.json!.issues)).toEqual([{ path: "/decision", message: "must be one of: approve, deny" }])
      const agents = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      const blocks = yield* send("POST", agents, owner.token, {
        agent_config_id: config.id,
        name: "x".repeat(300),
        input: { content_blocks: "hi" }
      })
      expect(inWords(blocks.json!.issues)).toEqual([
        { path: "/name", message: "must be at most 64 characters (got 300)" },
        { path: "/input/content_blocks", message: "expected an array with at least 1 item" }
      ])
      expect(blocks.text).not.toContain("x".repeat(65))
      // A block of a type no block has, or of no type: said at its type.
      const unknownType = yield* send("POST", agents, owner.token, {
        agent_config_id: config.id,
        input: { content_blocks: [{ type: "video", url: "x" }, { text: "no type" }] }
      })
      expect(inWords(unknownType.json!.issues)).toEqual([
        { path: "/input/content_blocks/0/type", message: "must be one of: text, media" },
        { path: "/input/content_blocks/1/type", message: "is required" }
      ])
      // A media block of no bytes, or of a media type no registry would hold.
      const media = yield* send("POST", agents, owner.token, {
        agent_config_id: config.id,
        input: {
          content_blocks: [
            { type: "media", media_type: `image/${"x".repeat(300)}`, data: "AAAA" },
            { type: "media", media_type: "image/png", data: "" }
          ]
        }
      })
      expect(inWords(media.json!.issues)).toEqual([
        { path: "/input/content_blocks/0/media_type", message: expect.stringContaining("at most 255 characters") },
        { path: "/input/content_blocks/1/data", message: "must not be empty: a media block carries at least one byte" }
      ])
      for (const response of [missing, extra, long, wrongType, decision, blocks]) expectPlainWords(String(response.json!.error))
    }))

  it.effect("ten issues are listed, and the sentence counts the paths with more: one for each, however many elements fail", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Many" } })
      // Half a million elements of the wrong type (a 1 MB body): ten listed, in order, the rest counted.
      const zeros = yield* send("POST", `/v1/orgs/${org.id}/models`, token, {
        provider_config_id: yield* newId(ModelProviderConfigId),
        name: "m",
        provider_model_slug: "m",
        context_window_tokens: 1000,
        supports_tools: true,
        supports_reasoning: false,
        input_modalities: Array(500_000).fill(0),
        output_modalities: ["text"]
      })
      expect(zeros.status).toBe(400)
      expect(zeros.json!.code).toBe("invalid_request")
      expect(inWords(zeros.json!.issues)).toEqual(
        Array.from({ length: 10 }, (_, i) => ({ path: `/input_modalities/${i}`, message: "expected a string of 1 to 128 characters" }))
      )
      expect(zeros.json!.error).toMatch(/^The request body does not match the API: \/input_modalities\/0: .* \(and 499990 more\)$/)

      // A media type too long and not of the form type/subtype fails two checks at one path: past the list, it counts once.
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const inputs = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/inputs`
      const media = yield* send("POST", inputs, owner.token, {
        content_blocks: Array.from({ length: 12 }, () => ({ type: "media", media_type: "x".repeat(300), data: "AAAA" }))
      })
      expect(media.status).toBe(400)
      expect(inWords(media.json!.issues).map(({ path }) => path)).toEqual(
        Array.from({ length: 10 }, (_, i) => `/content_blocks/${i}/media_type`)
      )
      expect(media.json!.error).toMatch(/ \(and 2 more\)$/)
      expect(media.text).not.toContain("x".repeat(65))
    }))

  it.effect("each issue of a long body is located by line and column in characters, a surrogate pair counting one", () =>
    Effect.gen(function*() {
      const { owner, projectPath } = yield* agentProject()
      // 14 MB on the first line (a media block of 10 MiB), emoji before the unknown keys, one on the
      // next line, and a missing field, listed last but located first (at the object that lacks it).
      const media = `{"type":"media","media_type":"image/png","data":"${"A".repeat(Math.floor((10 * 1024 * 1024) / 3) * 4)}"}`
      const firstLine = `{"input":{"content_blocks":[${media},{"type":"text","text":"😀 é 👩🏽‍💻"}]},"zz":1,"😀":2,`
      const secondLine = `  "yy":3}`
      const response = yield* rawRequest(
        HttpClientRequest.post(`/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`).pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyText(`${firstLine}\n${secondLine}`, "application/json")
        )
      )
      const columnOf = (text: string) => [...firstLine.slice(0, firstLine.indexOf(text))].length + 1
      expect(response.status).toBe(400)
      expect(response.json!.code).toBe("invalid_request")
      expect(response.json!.issues).toEqual([
        { path: "/zz", message: expect.stringContaining("is not allowed here"), line: 1, column: columnOf(`"zz"`) },
        { path: "/😀", message: expect.stringContaining("is not allowed here"), line: 1, column: columnOf(`"😀":2`) },
        { path: "/yy", message: expect.stringContaining("is not allowed here"), line: 2, column: 3 },
        { path: "/agent_config_id", message: "is required", line: 1, column: 1 }
      ])
      // Characters, not UTF-16 units: each of the four surrogate pairs before the keys counts one.
      expect(columnOf(`"zz"`)).toBe(firstLine.indexOf(`"zz"`) + 1 - 4)
    }))

  it.effect("a number too large for a double in a free-form field is 400 at that number, saying to send it smaller or as a string", () =>
    Effect.gen(function*() {
      const { config, owner, projectPath } = yield* agentProject()
      // JSON.stringify cannot write 1e400: JSON.parse reads it as Infinity, which no free-form value holds.
      const launch = (metadata: string) =>
        rawRequest(
          HttpClientRequest.post(`/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyText(`{"agent_config_id":"${config.id}",\n"metadata":${metadata}}`, "application/json")
          )
        )
      const message = "is a number beyond what a double holds (±1.7976931348623157e308); send a smaller number, or the value as a string"
      const labels = `{"size":1, "labels":{"a":[2, -1e400]}}`
      const response = yield* launch(labels)
      expect(response.status).toBe(400)
      expect(response.json).toEqual({
        error: `The request body does not match the API: /metadata/labels/a/1: ${message}`,
        issues: [{ path: "/metadata/labels/a/1", message, line: 2, column: `"metadata":${labels}`.indexOf("-1e400") + 1 }],
        code: "invalid_request"
      })
      // A property is located at its name, an array element at its first character.
      const top = yield* launch(`{"size":1e999}`)
      expect(top.json!.issues).toEqual([{ path: "/metadata/size", message, line: 2, column: `"metadata":{`.length + 1 }])
      // A smaller number is kept (1e-400 rounds to 0, as a double reads it).
      expect((yield* launch(`{"size":1e308,"tiny":1e-400}`)).json).toMatchObject({ metadata: { size: 1e308, tiny: 0 } })
    }))

  it.effect("unknown body fields are refused on every route, nested ones too, naming the field and the allowed ones", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Strict" } })
      const typo = yield* send("POST", `/v1/orgs/${org.id}/projects`, token, { name: "p", descripton: "typo" })
      expect(typo.status).toBe(400)
      expect(typo.json).toMatchObject({
        code: "invalid_request",
        issues: [{ path: "/descripton", message: "is not allowed here; allowed fields: name" }]
      })
      const orgExtra = yield* send("POST", "/v1/orgs", token, { name: "o", extra: 1 })
      expect(orgExtra.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/extra" }] })

      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const nested = yield* send("POST", `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/inputs`, owner.token, {
        content_blocks: [{ type: "text", text: "hi", xx: 1 }]
      })
      expect(nested.status).toBe(400)
      expect(nested.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/content_blocks/0/xx" }] })
    }))

  it.effect("an id in the path too long to be one is 400 naming the parameter, not 404 with no route", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      for (const length of [101, 1000]) {
        const response = yield* get(`/v1/orgs/${"a".repeat(length)}`, token)
        expect(response.status, `${length} characters`).toBe(400)
        expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/orgID" }] })
      }
    }))

  it.effect("a query that is not valid percent-encoding is 400 saying so; %25 is a percent sign", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      for (const query of ["limit=%FF", "limit=5&cursor=%ZZ", "limit=%"]) {
        const response = yield* get(`/v1/orgs?${query}`, token)
        expect(response.status, query).toBe(400)
        expect(response.json).toMatchObject({ code: "invalid_request", error: expect.stringContaining("The query is not valid percent-encoding") })
      }
      const encoded = yield* get("/v1/orgs?limit=%35", token)
      expect(encoded.status).toBe(200)
    }))

  it.effect("a POST without a body says the body is missing; a body of null is one, not an object", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* send("POST", "/v1/orgs", token)
      expect(response.status).toBe(400)
      expect(response.json).toMatchObject({ code: "invalid_request", error: expect.stringContaining("body is missing") })
      const nullBody = yield* send("POST", "/v1/orgs", token, null)
      expect(nullBody.status).toBe(400)
      expect(nullBody.json).toEqual({
        error: "The request body does not match the API: (the whole body): expected an object",
        issues: [{ path: "", message: "expected an object", line: 1, column: 1 }],
        code: "invalid_request"
      })
    }))

  it.effect("integers in queries and paths are plain decimal; anything else is 400 naming the parameter", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const events = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/events`
      for (const written of ["0x10", "1e2", "%2B1", "%201", "1.0", "01", "-1", "99999999999999999999"]) {
        const limit = yield* get(`/v1/orgs?limit=${written}`, owner.token)
        expect(limit.status).toBe(400)
        expect(limit.json).toMatchObject({
          code: "invalid_request",
          issues: [{ path: "/limit", message: "expected an integer between 1 and 100, written in decimal digits" }]
        })
        const after = yield* get(`${events}?after_sequence=${written}`, owner.token)
        expect(after.status).toBe(400)
        expect(after.json).toMatchObject({ issues: [{ path: "/after_sequence" }] })
      }
      // Past the largest safe integer: the message gives both bounds.
      expect((yield* get(`${events}?after_sequence=9007199254740993`, owner.token)).json).toMatchObject({
        issues: [{
          path: "/after_sequence",
          message: "expected an integer between 0 and 9007199254740991, written in decimal digits"
        }]
      })
      for (const url of [`/v1/orgs?limit=1&limit=2`, `${events}?limit=1&limit=2`, `${events}?after_sequence=1&after_sequence=x`]) {
        const twice = yield* get(url, owner.token)
        expect(twice.status).toBe(400)
        expect(twice.json).toMatchObject({
          code: "invalid_request",
          issues: [{ message: "is given more than once; give it once" }]
        })
      }
      expect((yield* get(`/v1/orgs?limit=2`, owner.token)).status).toBe(200)
      expect((yield* get(`${events}?after_sequence=0&limit=500`, owner.token)).status).toBe(200)
      const skill = yield* get(`/v1/orgs/${projectPath.orgID}/skills/skl_${"a".repeat(26)}/versions/1e0`, owner.token)
      expect(skill.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/version" }] })
    }))

  it.effect("a header parameter sent twice is 400 saying so, as a query parameter given twice is, whatever its values", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const stream = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/events/stream`
      // Node joins repeated headers ("1, 2"), which had been refused as not an integer.
      for (const ids of [["1", "2"], ["1", "1"], ["", ""]]) {
        const twice = yield* exchange(
          [`GET ${stream} HTTP/1.1`, "Host: 127.0.0.1", `Authorization: Bearer ${owner.token}`, ...ids.map((id) => `Last-Event-ID: ${id}`)].join("\n")
        )
        expect(twice.status, ids.join(" | ")).toBe(400)
        expect(twice.json).toEqual({
          error: "The headers do not match the API: /last-event-id: is given more than once; give it once",
          code: "invalid_request",
          issues: [{ path: "/last-event-id", message: "is given more than once; give it once" }]
        })
      }
    }))

  it.effect("unknown query parameters are 400 naming them and the allowed ones", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const events = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/events`
      const camel = yield* get(`${events}?afterSequence=3`, owner.token)
      expect(camel.status).toBe(400)
      expect(camel.json).toEqual({
        error: "Unknown query parameter afterSequence; allowed parameters: after_sequence, before_sequence, limit",
        code: "invalid_request",
        issues: [{ path: "/afterSequence", message: "is not allowed here; allowed parameters: after_sequence, before_sequence, limit" }]
      })
      // A name that is empty (`&=b`) is said to be missing, not listed as an unknown name that reads as nothing.
      const noName = "A query parameter has no name (a `=` with nothing before it): name it or leave it out"
      const nameless = yield* get(`${events}?limit=1&=b`, owner.token)
      expect(nameless.status).toBe(400)
      expect(nameless.json).toEqual({
        error: `${noName}; allowed parameters: after_sequence, before_sequence, limit`,
        code: "invalid_request",
        issues: [{ path: "/", message: "has no name: name it or leave it out; allowed parameters: after_sequence, before_sequence, limit" }]
      })
      const both = yield* get(`${events}?afterSequence=3&=`, owner.token)
      expect(both.json).toEqual({
        error: `${noName}; unknown query parameter afterSequence; allowed parameters: after_sequence, before_sequence, limit`,
        code: "invalid_request",
        issues: [
          { path: "/", message: "has no name: name it or leave it out; allowed parameters: after_sequence, before_sequence, limit" },
          { path: "/afterSequence", message: "is not allowed here; allowed parameters: after_sequence, before_sequence, limit" }
        ]
      })
      const none = yield* get("/v1/user?verbose=1", owner.token)
      expect(none.json).toMatchObject({ code: "invalid_request", error: expect.stringContaining("takes no query parameters") })
      // At most 10 are listed, as any issues are; the sentence says how many more.
      const names = Array.from({ length: 300 }, (_, i) => `a${i + 1}`)
      const many = yield* get(`/v1/orgs/${projectPath.orgID}/projects?${names.map((name) => `${name}=1`).join("&")}&limit=1`, owner.token)
      expect(many.status).toBe(400)
      const allowed = "allowed parameters: cursor, limit"
      expect(many.json).toEqual({
        error: `Unknown query parameters ${names.slice(0, 10).join(", ")} (and 290 more); ${allowed}`,
        code: "invalid_request",
        issues: names.slice(0, 10).map((name) => ({ path: `/${name}`, message: `is not allowed here; ${allowed}` }))
      })
    }))
})
