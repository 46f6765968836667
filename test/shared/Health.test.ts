import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { describeApp, rawRequest } from "../support/TestApp.ts"

describeApp()("health, OpenAPI and docs", (it) => {
  it.effect("/healthz and /readyz answer 200 without authentication", () =>
    Effect.gen(function*() {
      expect(yield* rawRequest(HttpClientRequest.get("/healthz"))).toMatchObject({ status: 200, json: { status: "ok" } })
      expect(yield* rawRequest(HttpClientRequest.get("/readyz"))).toMatchObject({ status: 200, json: { status: "ready" } })
    }))

  it.effect("the OpenAPI document lists every endpoint's error codes and statuses", () =>
    Effect.gen(function*() {
      const response = yield* rawRequest(HttpClientRequest.get("/v1/openapi.json"))
      expect(response.status).toBe(200)
      const document = response.json as any
      expect(document.info.version).toBe("0.1.0")
      const createProject = document.paths["/v1/orgs/{orgID}/projects"].post
      expect(Object.keys(createProject.responses).sort()).toEqual(
        ["201", "400", "401", "403", "404", "408", "409", "413", "415", "429", "500", "503"]
      )
      const operations = Object.values(document.paths).flatMap((path: any) => Object.values(path)) as Array<any>
      for (const operation of operations) {
        expect(Object.keys(operation.responses)).toContain("500")
        // Every route but the probes and the documents authenticates, within its key's rate.
        if (operation.security !== undefined && operation.security.length > 0) {
          expect(Object.keys(operation.responses), operation.operationId).toContain("429")
        }
      }
    }))

  it.effect("the docs page is served", () =>
    Effect.gen(function*() {
      const response = yield* rawRequest(HttpClientRequest.get("/docs"))
      expect(response.status).toBe(200)
      expect(response.text).toContain("<html")
    }))
})
