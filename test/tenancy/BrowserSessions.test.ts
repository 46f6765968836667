/**
 * Browser sessions (docs/access.md, "Browser sessions") through raw HTTP against the real server
 * layer: a personal API key opens one (its cookie set HttpOnly, Secure, SameSite=Strict for 12
 * hours, its CSRF token in the answer); the cookie with the token authenticates the project-scoped
 * routes as the key's user; without the token, or with another, `csrf_check_failed`; an unknown,
 * ended or expired session, and any cookie on a workspace-scoped route, `unauthorized`; only a
 * personal key opens one; a session ends when ended (the cookie cleared) or when its key is deleted;
 * opening one removes the expired ones.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { BrowserSessionId } from "../../src/domain/shared/Ids.ts"
import { describeApp, ID_PATTERN, newId, newUser, rawRequest } from "../support/TestApp.ts"

const COOKIE = "agent_platform_session"

/** A request with a bearer token, a session cookie and a CSRF header, each when given. */
const send = (
  method: "GET" | "POST" | "DELETE",
  path: string,
  auth: { readonly token?: string; readonly cookie?: string; readonly csrf?: string },
  body?: unknown
) => {
  let request = HttpClientRequest.make(method)(path)
  if (auth.token !== undefined) request = HttpClientRequest.bearerToken(request, auth.token)
  if (auth.cookie !== undefined) request = HttpClientRequest.setHeader(request, "cookie", `${COOKIE}=${auth.cookie}`)
  if (auth.csrf !== undefined) request = HttpClientRequest.setHeader(request, "x-csrf-token", auth.csrf)
  if (body !== undefined) request = HttpClientRequest.bodyJsonUnsafe(request, body)
  return rawRequest(request)
}

/** Opens a session with `token`: its answer, the cookie's value and the Set-Cookie header. */
const openSession = (token: string) =>
  Effect.gen(function*() {
    const opened = yield* send("POST", "/v1/user/sessions", { token })
    expect(opened.status).toBe(201)
    const setCookie = String(opened.headers["set-cookie"])
    const cookie = new RegExp(`${COOKIE}=([^;]+)`).exec(setCookie)?.[1]
    expect(cookie).toBeDefined()
    return { json: opened.json!, cookie: cookie!, setCookie, csrf: String(opened.json!.csrf_token) }
  })

describeApp()("browser sessions", (it) => {
  it.effect("a personal key opens a session; its cookie with its CSRF token acts as the key's user on project routes", () =>
    Effect.gen(function*() {
      const { token, user } = yield* newUser("session")
      const { cookie, csrf, json, setCookie } = yield* openSession(token)
      expect(json.id).toMatch(ID_PATTERN("bses"))
      expect(csrf.length).toBeGreaterThanOrEqual(40)
      const lifetime = Date.parse(String(json.expires_at)) - Date.parse(String(json.created_at))
      expect(lifetime).toBe(12 * 60 * 60 * 1000)
      expect(setCookie).toMatch(/; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Strict$/)

      const me = yield* send("GET", "/v1/user", { cookie, csrf })
      expect(me.status).toBe(200)
      expect(me.json).toMatchObject({ id: user.id })
      const org = yield* send("POST", "/v1/orgs", { cookie, csrf }, { name: "From a browser" })
      expect(org.status).toBe(201)
      const projects = yield* send("GET", `/v1/orgs/${org.json!.id}/projects`, { cookie, csrf })
      expect(projects.status).toBe(200)
    }))

  it.effect("the CSRF token is required and must be the session's; an unknown cookie is unauthorized; a bearer key is judged alone", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser("csrf")
      const { cookie, csrf } = yield* openSession(token)
      const other = yield* openSession(token)

      const missing = yield* send("GET", "/v1/user", { cookie })
      expect(missing.status).toBe(403)
      expect(missing.json).toMatchObject({ code: "csrf_check_failed" })
      expect(String(missing.json!.error)).toContain("x-csrf-token")
      const foreign = yield* send("POST", "/v1/orgs", { cookie, csrf: other.csrf }, { name: "Forged" })
      expect(foreign.status).toBe(403)
      expect(foreign.json).toMatchObject({ code: "csrf_check_failed" })

      const unknown = yield* send("GET", "/v1/user", { cookie: "not-a-session", csrf })
      expect(unknown.status).toBe(401)
      expect(unknown.json).toMatchObject({ code: "unauthorized" })
      // A request that sends an API key is the key's, whatever cookie it carries.
      const wrongKey = yield* send("GET", "/v1/user", { token: "apk_wrong", cookie, csrf })
      expect(wrongKey.status).toBe(401)
      expect(wrongKey.json!.error).toBe("The API key is not valid or has been revoked")
      const nothing = yield* send("GET", "/v1/user", {})
      expect(nothing.json!.error).toBe("Send an API key as 'Authorization: Bearer <token>'")
    }))

  it.effect("only a personal key opens a session; the workspace-scoped routes take the API key only", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser("opener")
      const { cookie, csrf } = yield* openSession(token)
      const byCookie = yield* send("POST", "/v1/user/sessions", { cookie, csrf })
      expect(byCookie.status).toBe(401)

      const org = yield* client.organizations.create({ payload: { name: "Keys" } })
      const orgKey = yield* client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "ci", role: "admin" } })
      const byOrgKey = yield* send("POST", "/v1/user/sessions", { token: orgKey.token })
      expect(byOrgKey.status).toBe(403)
      expect(byOrgKey.json).toMatchObject({ code: "forbidden" })

      for (const path of ["/api/v1/workspaces", "/api/v1/user/settings", "/v1/workspaces"]) {
        const workspace = yield* send("GET", path, { cookie, csrf })
        expect(workspace.status, path).toBe(401)
        expect((yield* send("GET", path, { token })).status, path).toBe(200)
      }
    }))

  it.effect("a session ends when ended (its cookie cleared), when it expires, and when its key is deleted", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser("ending")
      const first = yield* openSession(token)
      const ended = yield* send("DELETE", `/v1/user/sessions/${first.json.id}`, { cookie: first.cookie, csrf: first.csrf })
      expect(ended.status).toBe(204)
      expect(String(ended.headers["set-cookie"])).toMatch(new RegExp(`^${COOKIE}=; Max-Age=0; Path=/`))
      expect((yield* send("GET", "/v1/user", { cookie: first.cookie, csrf: first.csrf })).status).toBe(401)
      expect((yield* send("DELETE", `/v1/user/sessions/${first.json.id}`, { token })).status).toBe(404)

      // Another user's session is not found; ending it with the key leaves the cookie alone.
      const stranger = yield* newUser("stranger")
      const theirs = yield* openSession(stranger.token)
      expect((yield* send("DELETE", `/v1/user/sessions/${theirs.json.id}`, { token })).status).toBe(404)
      expect((yield* send("DELETE", `/v1/user/sessions/${yield* newId(BrowserSessionId)}`, { token })).status).toBe(404)
      const byKey = yield* send("DELETE", `/v1/user/sessions/${theirs.json.id}`, { token: stranger.token })
      expect(byKey.status).toBe(204)
      expect(byKey.headers["set-cookie"]).toBeUndefined()

      const expiring = yield* openSession(token)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE browser_sessions SET expires_at = now() - interval '1 second' WHERE id = ${String(expiring.json.id)}`
      expect((yield* send("GET", "/v1/user", { cookie: expiring.cookie, csrf: expiring.csrf })).status).toBe(401)

      const kept = yield* openSession(token)
      const [expiredRows] = yield* sql<{ readonly count: number }>`
        SELECT count(*)::int AS count FROM browser_sessions WHERE id = ${String(expiring.json.id)}`
      expect(expiredRows.count, "opening a session removes the expired ones").toBe(0)
      expect((yield* send("GET", "/v1/user", { cookie: kept.cookie, csrf: kept.csrf })).status).toBe(200)
      const keys = yield* client.user.listApiKeys({ query: {} })
      yield* client.user.deleteApiKey({ params: { keyID: keys.data[0].id } })
      const afterKey = yield* send("GET", "/v1/user", { cookie: kept.cookie, csrf: kept.csrf })
      expect(afterKey.status).toBe(401)
    }))
})
