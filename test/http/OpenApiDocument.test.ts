import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect } from "effect"
import { describeApp, newUser, rawRequest } from "../support/TestApp.ts"

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

const servedDocument = Effect.gen(function*() {
  const response = yield* rawRequest(HttpClientRequest.get("/v1/openapi.json"))
  expect(response.status).toBe(200)
  return response.json as any
})

const operationsOf = (document: any) =>
  Object.entries(document.paths as Record<string, any>).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => METHODS.includes(method)).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      operation: operation as any
    }))
  )

describeApp()("the OpenAPI document", (it) => {
  it.effect("passes the strict OpenAPI validator", () =>
    Effect.gen(function*() {
      const document = yield* servedDocument
      const result = yield* Effect.promise(() => new Validator().validate(document))
      expect(result.errors).toBeUndefined()
      expect(result.valid).toBe(true)
      expect(JSON.stringify(document)).not.toContain("/schemas/unknown")
    }))

  it.effect("gives every operation a summary in words and a human tag the document declares", () =>
    Effect.gen(function*() {
      const document = yield* servedDocument
      const tags = (document.tags as Array<{ name: string }>).map((tag) => tag.name)
      for (const tag of tags) expect(tag, tag).toMatch(/^[A-Z][a-z]*(?: (?:[a-z]+|API))*$/)
      expect(tags).toContain("Organization API keys")
      expect(tags).toContain("Model provider configs")
      const operations = operationsOf(document)
      expect(operations.length).toBeGreaterThan(80)
      const summaries = new Set<string>()
      for (const { name, operation } of operations) {
        expect(operation.summary, name).toMatch(/^[A-Z][a-z]+ .+[^.]$/)
        summaries.add(`${operation.tags?.[0]} ${operation.summary}`)
        expect(operation.tags, name).toHaveLength(1)
        expect(tags, name).toContain(operation.tags[0])
      }
      // No two operations of a tag share a summary.
      expect(summaries.size).toBe(operations.length)
      expect(document.paths["/v1/orgs/{orgID}/projects/{projectID}/agent-configs"].post.summary)
        .toBe("Create an agent config")
      expect(document.paths["/v1/orgs/{orgID}/api-keys"].post.tags).toEqual(["Organization API keys"])
    }))

  it.effect("names its server and describes the whole API", () =>
    Effect.gen(function*() {
      const document = yield* servedDocument
      expect(document.servers).toEqual([{ url: "/", description: expect.any(String) }])
      for (const word of ["agents", "agent configs", "models", "secrets", "skills", "Server-Sent Events", "/api/v1"]) {
        expect(document.info.description).toContain(word)
      }
    }))

  it.effect("declares integer parameters as integers", () =>
    Effect.gen(function*() {
      const document = yield* servedDocument
      const integers = ["limit", "after_sequence", "before_sequence", "version", "last-event-id"]
      const seen = new Set<string>()
      for (const { name, operation } of operationsOf(document)) {
        for (const parameter of operation.parameters ?? []) {
          if (!integers.includes(parameter.name)) continue
          seen.add(parameter.name)
          expect(parameter.schema.type, `${name} ${parameter.name}`).toBe("integer")
        }
      }
      expect([...seen].sort()).toEqual([...integers].sort())
    }))
})

describeApp()("integer query parameters", (it) => {
  it.effect("are still read from the query string, in decimal digits only", () =>
    Effect.gen(function*() {
      const { client, token } = yield* newUser("integers")
      yield* client.organizations.create({ payload: { name: "first" } })
      yield* client.organizations.create({ payload: { name: "second" } })
      const get = (query: string) =>
        rawRequest(HttpClientRequest.get(`/v1/orgs${query}`).pipe(HttpClientRequest.bearerToken(token)))
      const page = yield* get("?limit=1")
      expect(page.status).toBe(200)
      expect((page.json as any).data).toHaveLength(1)
      const refused = yield* get("?limit=1e1")
      expect(refused.status).toBe(400)
      expect(refused.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/limit" }] })
    }))
})
