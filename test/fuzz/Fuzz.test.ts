/**
 * Property-based fuzzing of every operation in the server's own OpenAPI document
 * (`/v1/openapi.json`), against the real server layer on a real database, with raw HTTP.
 *
 * For each operation and each category of requests (valid requests, path ids, another tenant,
 * queries, malformed bodies, odd strings, deep nesting, content types) a fast-check property
 * sends FUZZ_RUNS generated requests as organization A's owner, a member of A without project
 * access, organization B's admin key or B's owner, and checks the answer against
 * test/fuzz/WireProperties.ts. A failure prints its shrunk request as a curl line, its answer,
 * and the seed. Operations run reads first, then writes, then deletions (deepest first), so the
 * set-up's resources are there for as long as possible. docs/testing.md has the knobs.
 */
import { HttpServer } from "effect/http"
import type { NetAddress } from "effect/net"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { writeFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { TestAppLive } from "../support/TestApp.ts"
import { casesFor, categoriesOf } from "./FuzzCases.ts"
import { type Finding, formatFinding, fuzzSettings, runProperty } from "./FuzzRun.ts"
import { buildWorld, type FuzzWorld } from "./FuzzTenants.ts"
import { exchange } from "./HttpExchange.ts"
import { type Operation, readDocument } from "./OpenApiDocument.ts"

const settings = fuzzSettings()
console.log(`fuzz: seed ${settings.seed}, ${settings.runs} runs per property (FUZZ_SEED, FUZZ_RUNS)`)

// No rate limit: each caller's key sends thousands of requests in a longer run, and a 429 would
// hide the answer under test (the limit has its own tests).
const app = ManagedRuntime.make(Layer.merge(TestAppLive({ keyRate: Option.none() }), ScriptedProvider.layer))
const port = await app.runPromise(
  Effect.map(HttpServer.HttpServer, (server) => (server.address as NetAddress.InetAddress).port)
)
const published = await exchange(port, { method: "GET", target: "/v1/openapi.json" })
const document = readDocument(JSON.parse(published.text))

/** Reads, then writes (agent control last: it cancels the turns that tool results and approvals need), then deletions, deepest first. */
const rank = (operation: Operation) =>
  operation.method === "GET" ? 0 : operation.method === "DELETE" ? 3 : operation.path.endsWith("/control") ? 2 : 1
const operations = document.operations
  .filter((operation) => operation.path.startsWith("/v1/"))
  .map((operation, index) => ({ operation, index }))
  .sort((a, b) =>
    rank(a.operation) - rank(b.operation) ||
    (rank(a.operation) === 3 ? b.operation.path.split("/").length - a.operation.path.split("/").length : 0) ||
    a.index - b.index
  )
  .map(({ operation }) => operation)

let world: FuzzWorld
const findings: Array<Finding> = []
const statuses = new Map<number, number>()

beforeAll(async () => {
  world = await app.runPromise(Effect.flatMap(ScriptedProvider, buildWorld))
}, 120_000)

afterAll(async () => {
  const requests = [...statuses.values()].reduce((sum, count) => sum + count, 0)
  const histogram = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(", ")
  console.log(`fuzz: ${requests} requests (${histogram}); ${findings.length} failing properties; seed ${settings.seed}`)
  if (process.env.FUZZ_REPORT !== undefined) writeFileSync(process.env.FUZZ_REPORT, JSON.stringify(findings, null, 2))
  await app.dispose()
})

describe("fuzz: every operation of /v1/openapi.json", () => {
  it("the document lists the operations", () => {
    expect(operations.length).toBeGreaterThan(50)
    expect(operations.filter((operation) => operation.body !== undefined).length).toBeGreaterThan(20)
  })
  for (const operation of operations) {
    describe(`${operation.method} ${operation.path}`, () => {
      for (const category of categoriesOf(operation)) {
        it(category, async () => {
          const cases = casesFor(world, document, operation, category)
          const result = await runProperty(port, world, operation, category, cases, settings)
          for (const status of result.statuses) statuses.set(status, (statuses.get(status) ?? 0) + 1)
          if (result.finding !== undefined) {
            findings.push(result.finding)
            expect.fail(formatFinding(result.finding, settings))
          }
        }, 180_000)
      }
    })
  }
})
