/**
 * The streaming body guard, through raw HTTP against the real server: nesting, encoding, NUL,
 * lone surrogates, a key given twice and a key named __proto__ answered 400 with the field's JSON
 * Pointer; the route's size limit from Content-Length and from a chunked stream (413, then the
 * connection closes after a lingering close); per-part limits of the content block routes refused
 * while the body streams in; no body read before the caller is authenticated.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { AgentId, OrgId, ProjectId, ToolCallId } from "../../src/domain/shared/Ids.ts"
import { agentProject } from "../support/AgentProject.ts"
import { BODY_IDLE_MS } from "../../src/layers/http/JsonBody.ts"
import { declareBody, exchange } from "../support/RawHttp.ts"
import { describeApp, newId, newUser, rawRequest } from "../support/TestApp.ts"

const MiB = 1024 * 1024

const postJson = (path: string, token: string, body: string | Uint8Array) =>
  rawRequest(
    HttpClientRequest.post(path).pipe(
      HttpClientRequest.bearerToken(token),
      typeof body === "string"
        ? HttpClientRequest.bodyText(body, "application/json")
        : HttpClientRequest.bodyUint8Array(body, "application/json")
    )
  )

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

/** Request head for a JSON POST. */
const head = (path: string, headers: Record<string, string | number>) =>
  [`POST ${path} HTTP/1.1`, "Host: 127.0.0.1", "Content-Type: application/json", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
    .join("\n")

/** `prefix`, then `filler` in 64 KiB writes up to `total` bytes; as chunked-encoding frames when `chunked`. */
const streamOf = (prefix: string, filler: string, total: number, chunked = false) => {
  let sent = 0
  const block = Buffer.from(filler.repeat(Math.ceil(65536 / filler.length)).slice(0, 65536))
  const frame = (data: Buffer) =>
    chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]) : data
  return () => {
    if (sent >= total) return undefined
    const data = sent === 0 ? Buffer.from(prefix) : block.subarray(0, Math.min(block.length, total - sent))
    sent += data.length
    return frame(data)
  }
}

describeApp()("request bodies are checked as they arrive", (it) => {
  it.effect("nesting deeper than 64 levels is 400 naming where it went too deep; 64 levels pass the guard", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const deep = yield* postJson("/v1/orgs", token, `{"name":"x","extra":${nested(5000)}}`)
      expect(deep.status).toBe(400)
      expect(deep.json).toMatchObject({
        code: "invalid_request",
        error: expect.stringContaining("deeper than 64 levels"),
        issues: [{ path: "/extra" + "/0".repeat(63), message: "nests deeper than 64 levels" }]
      })
      // 64 levels reach the route, which answers for its own reasons (the field is unknown).
      const deepest = yield* postJson("/v1/orgs", token, `{"name":"x","extra":${nested(63)}}`)
      expect(deepest.status).not.toBe(500)
      expect(String(deepest.json?.error)).not.toContain("deeper")
    }))

  it.effect("invalid UTF-8 and a \\u0000 escape are 400 naming the field", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const bytes = Buffer.concat([Buffer.from('{"name":"ab'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])
      const invalidUtf8 = yield* postJson("/v1/orgs", token, bytes)
      expect(invalidUtf8.status).toBe(400)
      expect(invalidUtf8.json).toEqual({
        error: "The request body is not valid UTF-8",
        code: "invalid_request",
        issues: [{ path: "/name", message: "is not valid UTF-8 text" }]
      })
      const nul = yield* postJson("/v1/orgs", token, '{"name":"a\\u0000b"}')
      expect(nul.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/name" }] })
      const syntax = yield* postJson("/v1/orgs", token, '{"name":\n  "x",}')
      expect(syntax.json).toEqual({
        error: "The request body is not valid JSON: an unexpected '}' at line 2, column 7",
        code: "invalid_request"
      })
    }))

  it.effect("a byte order mark before the JSON is 400 naming it, however the body arrives; another leading 0xEF is an unexpected byte", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const refusal = {
        error: "The request body is not valid JSON: a byte order mark (EF BB BF) at line 1, column 1: send the JSON without it",
        code: "invalid_request"
      }
      const json = Buffer.from('{"name":"Marked"}')
      const bom = Buffer.from([0xef, 0xbb, 0xbf])
      const marked = yield* postJson("/v1/orgs", token, Buffer.concat([bom, json]))
      expect(marked.status).toBe(400)
      expect(marked.json).toEqual(refusal)
      // Its first byte alone in the first chunk ("1\r\n" 0xEF "\r\n"): named from what has arrived.
      const split = yield* exchange(
        ["POST /v1/orgs HTTP/1.1", "Host: 127.0.0.1", `Authorization: Bearer ${token}`, "Content-Type: application/json", "Transfer-Encoding: chunked"].join("\n"),
        [Buffer.from([0x31, 0x0d, 0x0a, 0xef, 0x0d, 0x0a]), Buffer.concat([Buffer.from(`${(2 + json.length).toString(16)}\r\n`), bom.subarray(1), json, Buffer.from("\r\n0\r\n\r\n")])]
      )
      expect(split.status).toBe(400)
      expect(split.json).toEqual(refusal)
      const other = yield* postJson("/v1/orgs", token, Buffer.concat([Buffer.from([0xef, 0x80, 0x80]), json]))
      expect(other.json).toEqual({
        error: "The request body is not valid JSON: an unexpected byte 0xef at line 1, column 1",
        code: "invalid_request"
      })
    }))

  it.effect("lone surrogate escapes are 400 naming the field: values, property names, content blocks", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const base = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        [`${base}/${agent.id}/inputs`, '{"content_blocks":[{"type":"text","text":"\\ud83d"}]}', "/content_blocks/0/text"],
        [
          `${base}/${agent.id}/inputs`,
          '{"content_blocks":[{"type":"text","text":"hi"}],"input_idempotency_key":"\\udc00"}',
          "/input_idempotency_key"
        ],
        [base, `{"agent_config_id":"${agent.agent_config_id}","metadata":{"\\ud800":"\\udfff"}}`, "/metadata"],
        ["/v1/orgs", '{"name":"\\ud83d\\ude00 \\ude00"}', "/name"]
      ]
      for (const [path, body, pointer] of cases) {
        const response = yield* postJson(path, owner.token, body)
        expect(response.status).toBe(400)
        expect(response.json).toMatchObject({
          code: "invalid_request",
          issues: [{ path: pointer, message: expect.stringContaining("unpaired surrogate") }]
        })
      }
      // A proper pair is an ordinary character.
      const pair = yield* postJson("/v1/orgs", owner.token, '{"name":"\\ud83d\\ude00"}')
      expect(pair.status).toBe(201)
      expect(pair.json!.name).toBe("😀")
      expect((yield* owner.client.agents.listEvents({ params: { ...projectPath, agentID: agent.id }, query: {} })).data)
        .toEqual([])
    }))

  it.effect("a property named __proto__ is 400 naming it, in free-form metadata too, however it is spelled", () =>
    Effect.gen(function*() {
      const { config, owner, projectPath } = yield* agentProject()
      const agents = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      const launch = (metadata: string) => postJson(agents, owner.token, `{"agent_config_id":"${config.id}","metadata":${metadata}}`)
      const cases: ReadonlyArray<readonly [string, string]> = [
        ['{"team":"blue","__proto__":{"admin":true}}', "/metadata/__proto__"],
        ['{"__pro\\u0074o__":"x"}', "/metadata/__proto__"],
        ['{"nested":{"__proto__":1}}', "/metadata/nested/__proto__"]
      ]
      for (const [metadata, pointer] of cases) {
        const response = yield* launch(metadata)
        expect(response.status).toBe(400)
        expect(response.json).toEqual({
          error: `The request body has a property named __proto__ at ${pointer}, which is not accepted ` +
            "(a JavaScript object cannot hold it as data); rename the property",
          code: "invalid_request",
          issues: [{ path: pointer, message: "__proto__ is not accepted as a property name; rename the property" }]
        })
      }
      const outsideMetadata = yield* postJson("/v1/orgs", owner.token, '{"name":"x","__proto__":{}}')
      expect(outsideMetadata.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/__proto__" }] })
      // Nothing was created; other keys JavaScript objects know are ordinary data.
      expect((yield* owner.client.agents.list({ params: projectPath, query: {} })).data).toEqual([])
      const ordinary = yield* launch('{"constructor":"c","toString":"t","prototype":"p"}')
      expect(ordinary.status).toBe(201)
      expect(ordinary.json!.metadata).toEqual({ constructor: "c", toString: "t", prototype: "p" })
    }))

  it.effect("a property given twice in one object is 400 naming it, however it is spelled; nothing is created", () =>
    Effect.gen(function*() {
      const { config, owner, projectPath } = yield* agentProject()
      const agents = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        ["/v1/orgs", '{"name":"first","name":"second"}', "/name"],
        ["/v1/orgs", '{"name":"first","n\\u0061me":"second"}', "/name"],
        [agents, `{"agent_config_id":"${config.id}","metadata":{"team":"a","owner":"b","team":"c"}}`, "/metadata/team"],
        [agents, `{"agent_config_id":"${config.id}","metadata":{"a":[[{"k":1}],{"k":1,"k":2}]}}`, "/metadata/a/1/k"],
        [agents, `{"agent_config_id":"${config.id}","metadata":{${
          Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(",")
        },"k7":0}}`, "/metadata/k7"]
      ]
      for (const [path, body, pointer] of cases) {
        const response = yield* postJson(path, owner.token, body)
        expect(response.status).toBe(400)
        expect(response.json).toEqual({
          error: `The request body gives the property ${pointer} more than once; give each property of an object once`,
          code: "invalid_request",
          issues: [{ path: pointer, message: "is given more than once in its object; give it once" }]
        })
      }
      expect((yield* owner.client.organizations.list({ query: {} })).data.map((org) => org.name)).toEqual(["Agents"])
      expect((yield* owner.client.agents.list({ params: projectPath, query: {} })).data).toEqual([])
      // The same key in different objects is no repeat.
      const siblings = yield* postJson(agents, owner.token, `{"agent_config_id":"${config.id}","metadata":{"a":{"k":1},"b":{"k":1},"k":2}}`)
      expect(siblings.status).toBe(201)
    }))

  it.effect("a chunked body over the route's limit is answered 413, then the connection closes", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* exchange(
        head("/v1/orgs", { Authorization: `Bearer ${token}`, "Transfer-Encoding": "chunked" }),
        streamOf('{"name":"', "x", 8 * MiB, true)
      )
      expect(response.status).toBe(413)
      expect(response.json).toEqual({ error: expect.stringContaining("1 MiB"), code: "request_too_large" })
      expect(response.headers.connection).toBe("close")
      expect(response.bodyBytesSent).toBeLessThan(8 * MiB)
    }))

  it.effect("after an early answer the server reads and drops what still arrives, then closes without a reset", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const path = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/inputs`
      // A client that goes on sending its body after the answer has arrived (it has not read it
      // yet): a connection destroyed at once would reset it, and many clients lose the answer then.
      const response = yield* exchange(
        head(path, { Authorization: `Bearer ${owner.token}`, "Content-Length": 47 * MiB }),
        streamOf('{"content_blocks":[{"type":"text","text":"', "t", 47 * MiB),
        { sendAfterAnswer: 2 * MiB }
      )
      expect(response.status).toBe(413)
      expect(response.headers.connection).toBe("close")
      expect(response.resetAfterAnswer).toBe(false)
    }))

  it.effect("a body that stops arriving is answered 408 invalid_request once nothing has come for the idle time", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser("stalled")
      const started = Date.now()
      // The headers declare 100 bytes; only the first arrives.
      const stalled = yield* declareBody("/v1/orgs", token, 100)
      expect(stalled.status).toBe(408)
      expect(stalled.json).toMatchObject({ code: "invalid_request", error: expect.stringContaining("stopped arriving") })
      expect(Date.now() - started).toBeGreaterThanOrEqual(BODY_IDLE_MS - 1000)
    }), BODY_IDLE_MS + 30_000)

  it.effect("16 unauthenticated requests declaring 47 MiB each are answered 401 without their bodies being read", () =>
    Effect.gen(function*() {
      const path = `/v1/orgs/${yield* newId(OrgId)}/projects/${yield* newId(ProjectId)}/agents/${yield* newId(AgentId)}/tool-calls/${yield* newId(ToolCallId)}/result`
      // Half without a key, half with a key that does not exist.
      const responses = yield* Effect.all(
        Array.from({ length: 16 }, (_, index) =>
          exchange(
            head(path, { "Content-Length": 49283072, ...(index % 2 === 0 ? {} : { Authorization: "Bearer apk_not-a-key" }) }),
            ['{"outcome":"succeeded","content_blocks":[']
          ).pipe(Effect.timeout("20 seconds"))),
        { concurrency: "unbounded" }
      )
      for (const response of responses) {
        expect(response.status).toBe(401)
        expect(response.json).toMatchObject({ code: "unauthorized" })
        expect(response.headers.connection).toBe("close")
      }
    }))

  it.effect("a body in another content type, charset or content encoding is 415, even an empty one that would be read as a form", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      for (const contentType of ["multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "text/plain"]) {
        const response = yield* rawRequest(
          HttpClientRequest.post("/v1/orgs").pipe(HttpClientRequest.bearerToken(token), HttpClientRequest.bodyText("", contentType))
        )
        expect(response.status).toBe(415)
        expect(response.json).toMatchObject({ code: "unsupported_media_type" })
      }
      // JSON in another charset, or compressed: refused too; UTF-8 named either way is JSON.
      const json = (headers: Record<string, string>) =>
        rawRequest(HttpClientRequest.post("/v1/orgs").pipe(
          HttpClientRequest.bearerToken(token),
          HttpClientRequest.bodyText(JSON.stringify({ name: "Charset" }), headers["content-type"] ?? "application/json"),
          HttpClientRequest.setHeaders(headers)
        ))
      for (const headers of [
        { "content-type": "application/json; charset=latin1" } as Record<string, string>,
        { "content-type": "application/json; charset=\"UTF-16\"" },
        { "content-encoding": "gzip" },
        { "content-encoding": "bogus" }
      ]) {
        const response = yield* json(headers)
        expect(response.status, JSON.stringify(headers)).toBe(415)
        expect(response.json).toMatchObject({ code: "unsupported_media_type" })
      }
      for (const headers of [{ "content-type": "application/json; charset=UTF-8" } as Record<string, string>, { "content-encoding": "identity" }]) {
        expect((yield* json(headers)).status, JSON.stringify(headers)).toBe(201)
      }
    }))

  it.effect("a body labelled by several Content-Types, or by several charsets of which one is not UTF-8, is 415 in either order", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const body = JSON.stringify({ name: "Labelled" })
      const post = (contentTypes: ReadonlyArray<string>) =>
        exchange(
          [
            "POST /v1/orgs HTTP/1.1",
            "Host: 127.0.0.1",
            `Authorization: Bearer ${token}`,
            ...contentTypes.map((value) => `Content-Type: ${value}`),
            `Content-Length: ${Buffer.byteLength(body)}`
          ].join("\n"),
          [body]
        )
      // Node keeps the first header: JSON then text had been read as JSON, text then JSON refused as text.
      for (const contentTypes of [["application/json", "text/plain"], ["text/plain", "application/json"], ["application/json", "application/json"]]) {
        const response = yield* post(contentTypes)
        expect(response.status, contentTypes.join(" | ")).toBe(415)
        expect(response.json).toEqual({
          error: "Send one Content-Type header, application/json; this request sends several",
          code: "unsupported_media_type"
        })
      }
      for (const [contentType, named] of [["application/json; charset=utf-8; charset=latin1", "latin1"], ["application/json;charset=\"UTF-16\";charset=utf-8", "utf-16"]]) {
        const response = yield* post([contentType])
        expect(response.status, contentType).toBe(415)
        expect(response.json).toEqual({ error: `Send the JSON body in UTF-8 (charset=utf-8 or no charset), not ${named}`, code: "unsupported_media_type" })
      }
      expect((yield* post(["application/json; charset=utf-8; charset=UTF8"])).status).toBe(201)
    }))

  it.effect("a transfer coding other than chunked is 415, as a Content-Encoding is; chunked alone is read", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const body = JSON.stringify({ name: "Coded" })
      const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`
      const post = (transferEncoding: ReadonlyArray<string>) =>
        exchange(
          [
            "POST /v1/orgs HTTP/1.1",
            "Host: 127.0.0.1",
            `Authorization: Bearer ${token}`,
            "Content-Type: application/json",
            ...transferEncoding.map((value) => `Transfer-Encoding: ${value}`)
          ].join("\n"),
          [chunked]
        )
      // The body is not decompressed: a gzip transfer coding would have been read as its bytes.
      for (const [codings, named] of [[["gzip, chunked"], "gzip"], [["GZIP", "chunked"], "gzip"], [["deflate,chunked"], "deflate"], [["x-custom, chunked"], "x-custom"]] as const) {
        const response = yield* post(codings)
        expect(response.status, codings.join(" | ")).toBe(415)
        expect(response.json).toEqual({
          error: `Send the body without a Transfer-Encoding other than chunked (${named} is not accepted)`,
          code: "unsupported_media_type"
        })
      }
      for (const codings of [["chunked"], ["Chunked"], ["identity, chunked"]]) {
        const response = yield* post(codings)
        expect(response.status, codings.join(" | ")).toBe(201)
        expect(response.json).toMatchObject({ name: "Coded" })
      }
    }))

  it.effect("a body sent to a route that takes none is ignored, whatever its content type; a route that takes one still refuses it", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Ignored bodies" } })
      const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Deleted" } })
      const send = (method: string, path: string, contentType: string, body: string) =>
        exchange(
          [
            `${method} ${path} HTTP/1.1`,
            "Host: 127.0.0.1",
            `Authorization: Bearer ${token}`,
            `Content-Type: ${contentType}`,
            `Content-Length: ${Buffer.byteLength(body)}`
          ].join("\n"),
          [body]
        )
      const listed = yield* send("GET", `/v1/orgs/${org.id}/projects`, "text/plain", "zzz")
      expect(listed.status).toBe(200)
      expect(listed.json).toMatchObject({ data: [{ id: project.id }] })
      expect((yield* send("GET", `/v1/orgs/${org.id}`, "multipart/form-data; boundary=x", "")).status).toBe(200)
      expect((yield* send("GET", `/v1/orgs/${org.id}`, "application/json; charset=latin1", "{}")).status).toBe(200)
      const refused = yield* send("POST", `/v1/orgs/${org.id}/projects`, "text/plain", "zzz")
      expect(refused.status).toBe(415)
      expect(refused.json).toEqual({ error: "Send the body as application/json, not text/plain", code: "unsupported_media_type" })
      // Whatever its declared size: it is not read, and the connection closes after the answer.
      const large = yield* exchange(
        [
          `GET /v1/orgs/${org.id} HTTP/1.1`,
          "Host: 127.0.0.1",
          `Authorization: Bearer ${token}`,
          "Content-Type: application/json",
          `Content-Length: ${47 * MiB}`
        ].join("\n"),
        ["{"]
      )
      expect(large.status).toBe(200)
      expect(large.headers.connection).toBe("close")
      const deleted = yield* send("DELETE", `/v1/orgs/${org.id}/projects/${project.id}`, "text/plain", "zzz")
      expect(deleted.status).toBe(204)
      expect((yield* send("GET", `/v1/orgs/${org.id}/projects/${project.id}`, "text/plain", "zzz")).status).toBe(404)
    }))

  it.effect("an Authorization header without the Bearer scheme is 401 saying the scheme is missing; two are 400", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* rawRequest(HttpClientRequest.get("/v1/user").pipe(HttpClientRequest.setHeader("authorization", token)))
      expect(response.status).toBe(401)
      expect(response.json).toEqual({ error: expect.stringContaining("Bearer scheme"), code: "unauthorized" })
      // Two keys: which one was meant is not known (Node would keep the first).
      const twice = yield* exchange(`GET /v1/user HTTP/1.1\nHost: x\nAuthorization: Bearer ${token}\nAuthorization: Bearer other`)
      expect(twice.status).toBe(400)
      expect(twice.json).toEqual({ error: expect.stringContaining("Send one Authorization header"), code: "invalid_request" })
    }))

  it.effect("what an array of content blocks holds besides blocks is charged as non-media: refused past 1 MiB as it streams in", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const agents = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      const inputs = `${agents}/${agent.id}/inputs`
      const declared = 16 * MiB
      // Numbers, objects without a type, strings, arrays: none is a block, each counted by its size
      // as compact JSON. (Each filler divides the 64 KiB writes, so the JSON stays whole.)
      const cases = [
        [inputs, '{"content_blocks":[', "0,", "/content_blocks"],
        [inputs, '{"content_blocks":[', "{}, ", "/content_blocks"],
        [inputs, '{"content_blocks":["', "AAAA", "/content_blocks"],
        [inputs, '{"content_blocks":[', "[1,2,3],", "/content_blocks"],
        [agents, `{"agent_config_id":"${agent.agent_config_id}","input":{"content_blocks":[`, "null,   ", "/input/content_blocks"]
      ] as const
      for (const [path, prefix, filler, array] of cases) {
        const response = yield* exchange(
          head(path, { Authorization: `Bearer ${owner.token}`, "Content-Length": declared }),
          streamOf(prefix, filler, declared)
        )
        expect(response.status, filler).toBe(413)
        expect(response.json).toEqual({
          error: `The non-media blocks of ${array} are more than 1 MiB as JSON; a submission may carry at most 1 MiB`,
          code: "request_too_large"
        })
        expect(response.bodyBytesSent, filler).toBeLessThan(declared / 2)
      }
      // An object that ends without a type is no media block, whatever its data: non-media, whole.
      const typeless = yield* postJson(inputs, owner.token, `{"content_blocks":[{"data":"${"AAAA".repeat(MiB / 2)}"}]}`)
      expect(typeless.status).toBe(413)
      expect(typeless.json).toMatchObject({ code: "request_too_large", error: expect.stringContaining("non-media blocks of /content_blocks") })
      // Under the budget, what is not a block is the decoder's to describe, as before.
      const few = yield* postJson(inputs, owner.token, '{"content_blocks":[0,{},{"data":"AAAA"},"x",[1]]}')
      expect(few.status).toBe(400)
      expect(few.json).toMatchObject({
        code: "invalid_request",
        issues: [
          { path: "/content_blocks/0", message: "expected an object" },
          { path: "/content_blocks/1/type", message: "is required" },
          { path: "/content_blocks/2/type", message: "is required" },
          { path: "/content_blocks/3", message: "expected an object" },
          { path: "/content_blocks/4", message: "expected an object" }
        ]
      })
      // Blocks beside them count as before: text up to the budget passes the stream check.
      const text = yield* postJson(inputs, owner.token, JSON.stringify({ content_blocks: [{ type: "text", text: "t".repeat(MiB - 64) }] }))
      expect(text.status).toBe(201)
    }))

  it.effect("the rest of a submission (outside its blocks, a media block's fields but data) is refused past 1 MiB as it streams in", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const agents = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      const inputs = `${agents}/${agent.id}/inputs`
      const declared = 47 * MiB
      // 47 MiB of metadata had been read whole and decoded, element by element, before it was refused.
      const cases = [
        [agents, `{"agent_config_id":"${agent.agent_config_id}","metadata":{"list":[`],
        [inputs, '{"content_blocks":[{"type":"media","media_type":"image/png","metadata":{"list":['],
        [inputs, '{"content_blocks":[{"metadata":{"list":[']
      ] as const
      for (const [path, prefix] of cases) {
        const response = yield* exchange(
          head(path, { Authorization: `Bearer ${owner.token}`, "Content-Length": declared }),
          streamOf(prefix, "0,", declared)
        )
        expect(response.status, prefix).toBe(413)
        expect(response.json).toEqual({
          error: "The request body is more than 1 MiB as JSON besides its content blocks (the media blocks' data and " +
            "the other blocks, which have limits of their own); its other fields may take at most 1 MiB together",
          code: "request_too_large"
        })
        expect(response.bodyBytesSent, prefix).toBeLessThan(declared / 2)
      }
      // The most a valid launch puts there passes: the agent's metadata and 20 media blocks' at 16 KiB each.
      const metadata = { note: "m".repeat(16_000) }
      const media = Array.from({ length: 20 }, () => ({ type: "media", media_type: "image/png", data: "AAAA", metadata }))
      const text = { type: "text", text: "t".repeat(MiB - 64) }
      const launched = yield* postJson(
        agents,
        owner.token,
        JSON.stringify({ agent_config_id: agent.agent_config_id, metadata, input: { content_blocks: [...media, text] } })
      )
      expect(launched.status).toBe(201)
    }))

  it.effect("a content block over its limit is refused while the body streams in, long before 47 MiB arrive", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const path = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/inputs`
      const declared = 47 * MiB
      // A text block past 1 MiB; a media block (its type not yet known) past 10 MiB decoded.
      const cases = [
        ['{"content_blocks":[{"type":"text","text":"', "t", "non-media"],
        ['{"content_blocks":[{"data":"', "AAAA", "/content_blocks/0"]
      ] as const
      for (const [prefix, filler, named] of cases) {
        const response = yield* exchange(
          head(path, { Authorization: `Bearer ${owner.token}`, "Content-Length": declared }),
          streamOf(prefix, filler, declared)
        )
        expect(response.status).toBe(413)
        expect(response.json).toMatchObject({ code: "request_too_large", error: expect.stringContaining(named) })
        expect(response.bodyBytesSent).toBeLessThan(declared / 2)
      }
    }))
})
