/**
 * What the HTTP edge answers outside the Api's routes: Node's own refusals (headers or URL over
 * 16 KiB, malformed HTTP) in our error shape, after the answers of the requests before a malformed
 * one on its connection; a path that is not valid percent-encoding, one that differs from a route
 * only by case, an empty segment or a trailing slash, the pointer at `/`, CORS for configured
 * origins only, and an OpenAPI document whose 400 describes the body really sent.
 */
import { HttpClientRequest, HttpServer } from "effect/http"
import type { NetAddress } from "effect/net"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { connect } from "node:net"
import { MachineId } from "../../src/domain/shared/Ids.ts"
import { exchange } from "../support/RawHttp.ts"
import { describeApp, newId, newUser, rawRequest } from "../support/TestApp.ts"

const ALLOWED = "https://app.example.test"

describeApp()("what Node answers itself, in our error shape", (it) => {
  it.effect("headers or a query over 16 KiB are 431 request_too_large with a JSON body", () =>
    Effect.gen(function*() {
      const header = yield* exchange(`GET /v1/user HTTP/1.1\nHost: x\nX-Padding: ${"p".repeat(17_000)}`)
      expect(header.status).toBe(431)
      expect(header.headers["content-type"]).toBe("application/json")
      expect(header.json).toEqual({ error: expect.stringContaining("16 KiB"), code: "request_too_large" })
      const query = yield* exchange(`GET /v1/orgs?cursor=${"c".repeat(17_000)} HTTP/1.1\nHost: x`)
      expect(query.status).toBe(431)
      expect(query.json).toMatchObject({ code: "request_too_large" })
    }))

  it.effect("malformed HTTP or no Host is 400 invalid_request with a JSON body; an Expect other than 100-continue 417", () =>
    Effect.gen(function*() {
      for (const head of ["NOT HTTP AT ALL", "GET /v1/user HTTP/1.1\nHost: x\nContent-Length: twelve"]) {
        const response = yield* exchange(head)
        expect(response.status).toBe(400)
        expect(response.json).toEqual({ error: expect.any(String), code: "invalid_request" })
      }
      // HTTP/1.1 requires Host; HTTP/1.0 does not.
      const hostless = yield* exchange("GET /healthz HTTP/1.1")
      expect(hostless.status).toBe(400)
      expect(hostless.json).toEqual({ error: "Send a Host header: HTTP/1.1 requires one", code: "invalid_request" })
      expect((yield* exchange("GET /healthz HTTP/1.0")).status).toBe(200)
      // More than one Host is 400 too (RFC 9112, 3.2), whatever the version (Node would keep the first).
      for (const head of ["GET /healthz HTTP/1.1\nHost: x\nHost: y", "GET /healthz HTTP/1.1\nHost: x\nHost: x", "GET /healthz HTTP/1.0\nHost: x\nhost: y"]) {
        const twoHosts = yield* exchange(head)
        expect(twoHosts.status, head).toBe(400)
        expect(twoHosts.json).toEqual({ error: "Send one Host header; this request sends several", code: "invalid_request" })
      }
      expect((yield* exchange("GET /healthz HTTP/1.1\nHost: x")).status).toBe(200)
      const expectation = yield* exchange("GET /healthz HTTP/1.1\nHost: x\nExpect: bogus")
      expect(expectation.status).toBe(417)
      expect(expectation.json).toEqual({ error: expect.stringContaining("100-continue"), code: "invalid_request" })
    }))
})

describeApp()("the request id", (it) => {
  it.effect("a caller's x-request-id is kept when it is one header of at most 200 printable ASCII characters; else the server makes its own", () =>
    Effect.gen(function*() {
      const GENERATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
      const withIds = (...ids: ReadonlyArray<string>) =>
        exchange(["GET /healthz HTTP/1.1", "Host: x", ...ids.map((id) => `X-Request-Id: ${id}`)].join("\n"))
      for (const id of ["req-42", "a b:c/d=e", "~".repeat(200)]) {
        const kept = yield* withIds(id)
        expect(kept.status).toBe(200)
        expect(kept.headers["x-request-id"]).toBe(id)
      }
      // Two headers had been echoed joined ("a, b"), and a long one was bounded by the 16 KiB of the headers only.
      for (const ids of [["a", "b"], ["a", "a"], ["r".repeat(201)], ["tab\there"], ["caf\u00e9"]]) {
        const replaced = yield* withIds(...ids)
        expect(replaced.status, ids.join(" | ")).toBe(200)
        expect(replaced.headers["x-request-id"], ids.join(" | ")).toMatch(GENERATED)
      }
    }))
})

/**
 * Writes `first` on a new connection, then `then` once an answer has begun to arrive (when given),
 * and gives everything the server sent until it closed the connection.
 */
const conversation = (first: string, then?: string) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.callback<string, Error>((resume) => {
      const socket = connect((server.address as NetAddress.InetAddress).port, "127.0.0.1")
      let received = ""
      const timer = setTimeout(() => socket.destroy(new Error(`the server kept the connection open; it sent: ${received}`)), 10_000)
      socket.setEncoding("utf8")
      socket.on("data", (chunk: string) => {
        received += chunk
        if (then !== undefined && received.includes("\r\n\r\n")) {
          socket.write(then)
          then = undefined
        }
      })
      socket.on("error", (error) => resume(Effect.fail(error)))
      socket.on("close", () => {
        clearTimeout(timer)
        resume(Effect.succeed(received))
      })
      socket.write(first)
    }))

describeApp()("a malformed request after others on one connection", (it) => {
  it.effect("is refused once the requests before it are answered: their answers first, then the 400, then the connection closes", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("pipeliner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Pipelines" } })
      const body = JSON.stringify({ name: "before-garbage" })
      const pipelined = yield* conversation(
        `POST /v1/orgs/${org.id}/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${owner.token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}garbage\r\n\r\n`
      )
      const [created, refused] = pipelined.split(/(?=HTTP\/1\.1 )/)
      expect(created).toMatch(/^HTTP\/1\.1 201 /)
      expect(created).toContain('"name":"before-garbage"')
      expect(refused).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
      expect(JSON.parse(refused.slice(refused.indexOf("\r\n\r\n") + 4))).toEqual({
        error: "The request is not valid HTTP/1.1",
        code: "invalid_request"
      })
      const projects = yield* owner.client.projects.list({ params: { orgID: org.id }, query: {} })
      expect(projects.data.map((project) => project.name)).toContain("before-garbage")

      // On a connection kept alive after its answer, too.
      const later = yield* conversation("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", "garbage\r\n\r\n")
      expect(later.split(/(?=HTTP\/1\.1 )/).map((answer) => answer.slice(0, 12))).toEqual(["HTTP/1.1 200", "HTTP/1.1 400"])
    }))
})

describeApp()("CONNECT", (it) => {
  it.effect("is 404 not_found with the usual body, and the connection closes: no route takes CONNECT (this server is no proxy)", () =>
    Effect.gen(function*() {
      for (const target of ["127.0.0.1:9481", "/v1/user"]) {
        const response = yield* exchange(`CONNECT ${target} HTTP/1.1\nHost: 127.0.0.1:9481`)
        expect(response.status, target).toBe(404)
        expect(response.headers["content-type"]).toBe("application/json")
        expect(response.headers.connection).toBe("close")
        expect(response.json).toEqual({ error: `No route CONNECT ${target}; this server is not a proxy`, code: "not_found" })
      }
    }))
})

describeApp()("Expect: 100-continue", (it) => {
  /** Sends the head, and the body only once the server says 100 Continue: what the server said, in order. */
  const expectContinue = (head: string, body: string) =>
    Effect.gen(function*() {
      const port = ((yield* HttpServer.HttpServer).address as NetAddress.InetAddress).port
      return yield* Effect.callback<string>((resume) => {
        const socket = connect(port, "127.0.0.1")
        let received = ""
        socket.on("data", (chunk) => {
          const before = received
          received += chunk.toString()
          if (!before.includes("100 Continue") && received.includes("HTTP/1.1 100 Continue\r\n\r\n")) socket.write(body)
          if (/\r\n\r\n\{.*\}$/s.test(received.replace(/^HTTP\/1.1 100 Continue\r\n\r\n/, ""))) resume(Effect.succeed(received))
        })
        socket.write(head.replace(/\n/g, "\r\n") + `\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
        return Effect.sync(() => socket.destroy())
      })
    })

  it.effect("the body is asked for when the route reads it; a request refused from its headers is answered without it", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const created = yield* expectContinue(`POST /v1/orgs HTTP/1.1\nHost: x\nAuthorization: Bearer ${token}`, '{"name":"continued"}')
      expect(created).toMatch(/^HTTP\/1.1 100 Continue\r\n\r\nHTTP\/1.1 201 /)
      expect(created).toContain('"name":"continued"')
      const refused = yield* expectContinue("POST /v1/orgs HTTP/1.1\nHost: x\nAuthorization: Bearer nobody", '{"name":"never"}')
      expect(refused).toMatch(/^HTTP\/1.1 401 /)
    }))
})

describeApp()("paths that are not valid percent-encoding", (it) => {
  it.effect("are 400 invalid_request saying so, under /v1, /api/v1 or no route; a decodable unknown path is 404, naming the methods it takes", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const get = (path: string) => exchange(`GET ${path} HTTP/1.1\nHost: x\nAuthorization: Bearer ${token}`)
      // %ZZ is not hexadecimal, a lone % ends the path, %C3 starts a UTF-8 sequence it does not finish.
      for (const path of ["/v1/orgs/%ZZ", "/api/v1/orgs/%ZZ", "/v1/orgs/%", "/v1/orgs/%C3", "/v1/%ZZ/projects", "/nowhere/%ZZ"]) {
        const response = yield* get(path)
        expect(response.status).toBe(400)
        expect(response.json).toEqual({
          error: expect.stringContaining("The path is not valid percent-encoding"),
          code: "invalid_request"
        })
      }
      const unknown = yield* get("/v1/nowhere/%C3%A9?limit=1")
      expect(unknown.status).toBe(404)
      expect(unknown.json).toEqual({ code: "not_found", error: "No route GET /v1/nowhere/%C3%A9" })
      // Under /api/v1 the path is named as sent, not as served.
      const unknownSelfHosted = yield* get("/api/v1/nowhere")
      expect(unknownSelfHosted.json).toEqual({ code: "not_found", error: "No route GET /api/v1/nowhere" })
      // A path routes take with other methods names them, in the message and in Allow.
      const wrongMethod = yield* exchange(`DELETE /api/v1/orgs HTTP/1.1\nHost: x\nAuthorization: Bearer ${token}`)
      expect(wrongMethod.status).toBe(404)
      expect(wrongMethod.headers["allow"]).toBe("GET, HEAD, POST")
      expect(wrongMethod.json).toEqual({ code: "not_found", error: "No route DELETE /api/v1/orgs; this path takes GET, HEAD, POST" })
      expect(unknown.headers["allow"]).toBeUndefined()
      // So do the paths served beside the Api's endpoints (they had been "No route POST /docs" alone).
      for (const path of ["/", "/docs", "/v1/openapi.json", "/api/v1/openapi.json", "/v1/machines/ws"]) {
        const response = yield* exchange(`POST ${path} HTTP/1.1\nHost: x\nAuthorization: Bearer ${token}`)
        expect(response.status, path).toBe(404)
        expect(response.headers["allow"], path).toBe("GET, HEAD")
        expect(response.json).toEqual({ code: "not_found", error: `No route POST ${path}; this path takes GET, HEAD` })
      }
      // A path that decodes reaches its route, which checks the id as usual.
      const badId = yield* get("/v1/orgs/%41")
      expect(badId.status).toBe(400)
      expect(badId.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/orgID" }] })
    }))
})

describeApp()("paths match a route exactly", (it) => {
  it.effect("a path that differs from one only by letter case, an empty segment or a trailing slash is 404 not_found, as an unknown path", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Exact paths" } })
      const send = (method: string, path: string) => exchange(`${method} ${path} HTTP/1.1\nHost: x\nAuthorization: Bearer ${token}`)
      const projects = `/v1/orgs/${org.id}/projects`
      for (const path of [projects, `/api${projects}`, "/v1/orgs", "/healthz", "/docs", "/v1/openapi.json"]) {
        expect((yield* send("GET", path)).status, path).toBe(200)
      }
      const nearMisses = [
        `/V1/orgs/${org.id}/projects`,
        `/v1/Orgs/${org.id}/projects`,
        `/API/v1/orgs/${org.id}/projects`,
        `/v1//orgs/${org.id}/projects`,
        `/api/v1//orgs/${org.id}/projects`,
        `/v1/orgs/${org.id}//projects`,
        `//v1/orgs/${org.id}/projects`,
        `${projects}/`,
        // Where a parameter stands, an empty segment is no id of nothing: it names no route.
        "/v1/orgs/",
        "/v1/orgs//projects",
        "/v1/orgs/?limit=1",
        "/Healthz",
        "/healthz/",
        "/DOCS",
        "/docs/",
        "/V1/openapi.json",
        "/v1/openapi.json/",
        "/v1/machines/ws/"
      ]
      for (const target of nearMisses) {
        const response = yield* send("GET", target)
        expect(response.status, target).toBe(404)
        expect(response.json, target).toEqual({ code: "not_found", error: `No route GET ${target.split("?")[0]}` })
        expect(response.headers["allow"], target).toBeUndefined()
      }
      // Nor does another method at such a path name the methods of the route it resembles.
      for (const target of ["/v1/orgs/", "/V1/orgs", `/v1/orgs/${org.id}/`]) {
        const response = yield* send("DELETE", target)
        expect(response.json, target).toEqual({ code: "not_found", error: `No route DELETE ${target}` })
        expect(response.headers["allow"], target).toBeUndefined()
      }
    }))
})

describeApp()("only ? starts the query; a fragment is refused", (it) => {
  it.effect("a ; is a character of the path, as %3B is, for the router as for the guards; a # is 400 invalid_request", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Semicolons" } })
      const get = (target: string) => exchange(`GET ${target} HTTP/1.1\nHost: x\nAuthorization: Bearer ${token}`)
      // Part of the id: the id is not valid, whichever route it is on; never a query parameter x.
      for (const target of [`/v1/orgs/${org.id};x=1/projects`, `/v1/orgs/${org.id}%3Bx=1/projects`, `/v1/orgs/${org.id};x=1`]) {
        const response = yield* get(target)
        expect(response.status, target).toBe(400)
        expect(response.json, target).toMatchObject({ code: "invalid_request", issues: [{ path: "/orgID" }] })
      }
      expect((yield* get(`/v1/orgs/${org.id}/projects`)).status).toBe(200)
      const user = yield* get("/v1/user;x=1")
      expect(user.status).toBe(404)
      expect(user.json).toEqual({ code: "not_found", error: "No route GET /v1/user;x=1" })
      // After a ; the path is still checked as a path: %FF there is not valid percent-encoding, as
      // after ?path= it is not a valid query, and %25FF (a %, then FF) is a path no route takes.
      const files = `/v1/orgs/${org.id}/machines/${yield* newId(MachineId)}/files`
      const invalid = yield* get(`${files};path=/x/a%FFb`)
      expect(invalid.status).toBe(400)
      expect(invalid.json).toEqual({ code: "invalid_request", error: expect.stringContaining("The path is not valid percent-encoding") })
      const query = yield* get(`${files}?path=/x/a%FFb`)
      expect(query.status).toBe(400)
      expect(query.json).toEqual({ code: "invalid_request", error: expect.stringContaining("The query is not valid percent-encoding") })
      const escaped = yield* get(`${files};path=/x/a%25FFb`)
      expect(escaped.status).toBe(404)
      expect(escaped.json).toEqual({ code: "not_found", error: `No route GET ${files};path=/x/a%25FFb` })
      // A ; after the ? is part of the query, as any character there.
      const inQuery = yield* get(`/v1/orgs?limit=1;x=1`)
      expect(inQuery.status).toBe(400)
      expect(inQuery.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/limit" }] })
      // Clients never send a fragment: a # in the request target is not HTTP, wherever it stands.
      for (const target of ["/v1/user#x", "/v1/user?#x", `/v1/orgs/${org.id}#/projects`, "/api/v1/user#", "/nowhere#x"]) {
        const response = yield* get(target)
        expect(response.status, target).toBe(400)
        expect(response.json, target).toEqual({
          code: "invalid_request",
          error: "The request target has a fragment (#...), which HTTP requests do not carry: leave it out, or write a # in a path or query as %23"
        })
      }
      expect((yield* get("/v1/user?")).status).toBe(200)
    }))
})

describeApp()("the root, the OpenAPI document and CORS without configured origins", (it) => {
  it.effect("GET / points at the docs, the OpenAPI document and the version", () =>
    Effect.gen(function*() {
      const response = yield* rawRequest(HttpClientRequest.get("/"))
      expect(response.status).toBe(200)
      expect(response.json).toEqual({ name: "agent-platform", version: "0.1.0", docs: "/docs", openapi: "/v1/openapi.json" })
    }))

  it.effect("the 400 of every operation is the invalid_request body, with issues of path and message", () =>
    Effect.gen(function*() {
      const document = (yield* rawRequest(HttpClientRequest.get("/v1/openapi.json"))).json as any
      expect(JSON.stringify(document)).not.toContain("HttpApiDecodeError")
      for (const path of Object.values(document.paths) as Array<any>) {
        for (const operation of Object.values(path) as Array<any>) {
          const schema = operation.responses["400"].content["application/json"].schema
          const refs = (schema.anyOf ?? [schema]).map((member: any) => member.$ref)
          expect(refs).toContain("#/components/schemas/InvalidRequest")
          // The error codes answered with 400: the schema failures, and the one file code of the machines routes.
          for (const ref of refs) expect(["InvalidRequest", "ValidationFailed", "NotAFile"]).toContain(ref.split("/").pop())
        }
      }
      const resolve = (schema: any) => schema.$ref ? document.components.schemas[schema.$ref.split("/").pop()] : schema
      const issue = document.components.schemas.Issue
      expect(issue).toMatchObject({ type: "object", required: ["path", "message"] })
      expect(Object.fromEntries(Object.entries(issue.properties).map(([name, schema]) => [name, resolve(schema).type])))
        .toEqual({ path: "string", message: "string", line: "integer", column: "integer" })
      const limit = document.paths["/v1/orgs"].get.parameters.find((parameter: any) => parameter.name === "limit")
      expect(limit.schema).toEqual({ type: "integer", minimum: 1, maximum: 100 })
    }))

  it.effect("no origin is allowed by default: no CORS headers, preflight not answered", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const response = yield* rawRequest(
        HttpClientRequest.get("/v1/user").pipe(HttpClientRequest.bearerToken(token), HttpClientRequest.setHeader("origin", ALLOWED))
      )
      expect(response.status).toBe(200)
      expect(response.headers["access-control-allow-origin"]).toBeUndefined()
      const preflight = yield* rawRequest(
        HttpClientRequest.make("OPTIONS")("/v1/user").pipe(HttpClientRequest.setHeader("origin", ALLOWED))
      )
      expect(preflight.status).toBe(404)
    }))
})

describeApp({ corsOrigins: [ALLOWED, "https://other.example.test"] })("CORS for configured origins", (it) => {
  const preflight = (origin: string) =>
    rawRequest(
      HttpClientRequest.make("OPTIONS")("/v1/orgs").pipe(
        HttpClientRequest.setHeaders({
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type"
        })
      )
    )

  it.effect("an allowed origin's preflight is 204 with the methods and headers the API takes, credentials allowed", () =>
    Effect.gen(function*() {
      const response = yield* preflight(ALLOWED)
      expect(response.status).toBe(204)
      expect(response.headers["access-control-allow-origin"]).toBe(ALLOWED)
      expect(response.headers["access-control-allow-methods"]).toContain("POST")
      expect(response.headers["access-control-allow-headers"]!.split(",")).toEqual(
        expect.arrayContaining(["authorization", "content-type", "last-event-id", "x-csrf-token"])
      )
      expect(response.headers["access-control-expose-headers"]).toBe("x-request-id,ratelimit-limit,ratelimit-remaining,ratelimit-reset,retry-after")
      // A page of the origin may call with a browser session's cookie.
      expect(response.headers["access-control-allow-credentials"]).toBe("true")
    }))

  it.effect("an allowed origin's requests carry the CORS headers; another origin's carry none", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const from = (origin: string) =>
        rawRequest(
          HttpClientRequest.get("/v1/user").pipe(HttpClientRequest.bearerToken(token), HttpClientRequest.setHeader("origin", origin))
        )
      const allowed = yield* from(ALLOWED)
      expect(allowed.headers["access-control-allow-origin"]).toBe(ALLOWED)
      expect(allowed.headers["access-control-expose-headers"]).toBe("x-request-id,ratelimit-limit,ratelimit-remaining,ratelimit-reset,retry-after")
      expect(allowed.headers["access-control-allow-credentials"]).toBe("true")
      const refused = yield* from("https://evil.example.test")
      expect(refused.status).toBe(200)
      expect(Object.keys(refused.headers).filter((name) => name.startsWith("access-control-"))).toEqual([])
      const refusedPreflight = yield* preflight("https://evil.example.test")
      expect(Object.keys(refusedPreflight.headers).filter((name) => name.startsWith("access-control-"))).toEqual([])
    }))
})
