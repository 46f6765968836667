/**
 * Runs one property (an operation and a category of requests) with fast-check and, when it
 * fails, turns fast-check's shrunk counterexample into a finding: the violations, the request as
 * a curl line, the answer, and the seed to run it again.
 *
 * Knobs: FUZZ_RUNS (cases per property, default 4), FUZZ_SEED (the run's seed, random by
 * default and printed), FUZZ_REPORT (a file to write the findings to as JSON).
 */
import fc from "fast-check"
import type { Category, FuzzCase } from "./FuzzCases.ts"
import type { FuzzWorld } from "./FuzzTenants.ts"
import { abbreviate, asCurl, exchange, type RawResponse } from "./HttpExchange.ts"
import type { Operation } from "./OpenApiDocument.ts"
import { violationsOf } from "./WireProperties.ts"

export interface FuzzSettings {
  readonly runs: number
  readonly seed: number
}

export const fuzzSettings = (): FuzzSettings => ({
  runs: Number(process.env.FUZZ_RUNS ?? 4),
  seed: process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED)
})

/** How long one property may spend, shrinking included, before fast-check stops it. */
const PROPERTY_TIME_LIMIT_MS = 60_000

export interface Finding {
  readonly operation: string
  readonly route: string
  readonly category: Category
  readonly caller: string
  readonly summary: string
  readonly violations: ReadonlyArray<string>
  readonly status: number | undefined
  readonly response: string
  readonly reproduction: string
  readonly seed: number
  readonly shrinks: number
}

/** A 32-bit seed per property, from the run's seed, so one property can be run again alone. */
const propertySeed = (seed: number, operation: Operation, category: Category) => {
  let hash = 2166136261 ^ seed
  for (const char of `${operation.id} ${category}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619)
  return hash | 0
}

const TOKEN_VARIABLES = {
  owner: "OWNER_TOKEN",
  member: "MEMBER_TOKEN",
  otherTenantKey: "OTHER_TENANT_KEY",
  otherTenantOwner: "OTHER_TENANT_OWNER_TOKEN"
} as const

/** The request with every id of organization A replaced by a valid-looking id of nothing. */
const withoutTenantA = (world: FuzzWorld, sent: FuzzCase): FuzzCase => {
  let target = sent.request.target
  for (const ids of Object.values(world.tenantA.pools)) {
    for (const id of ids) {
      const prefix = id.split("_")[0]
      if (id.includes("_")) target = target.replaceAll(id, `${prefix}_${"a".repeat(26)}`)
    }
  }
  return { ...sent, request: { ...sent.request, target } }
}

export interface PropertyResult {
  readonly finding: Finding | undefined
  readonly statuses: ReadonlyArray<number>
}

export const runProperty = async (
  port: number,
  world: FuzzWorld,
  operation: Operation,
  category: Category,
  cases: fc.Arbitrary<FuzzCase>,
  settings: FuzzSettings
): Promise<PropertyResult> => {
  const statuses: Array<number> = []
  const failures = new Map<FuzzCase, { violations: Array<string>; response: RawResponse | undefined }>()
  const send = (sent: FuzzCase) => exchange(port, { ...sent.request, token: world.callers[sent.caller].token })
  const property = fc.asyncProperty(cases, async (sent) => {
    let response: RawResponse
    try {
      response = await send(sent)
    } catch (error) {
      failures.set(sent, { violations: [String((error as Error).message)], response: undefined })
      return false
    }
    statuses.push(response.status)
    const violations = await violationsOf(operation, sent, response, () => send(withoutTenantA(world, sent)))
    if (violations.length === 0) return true
    failures.set(sent, { violations, response })
    return false
  })
  const seed = propertySeed(settings.seed, operation, category)
  const details = await fc.check(property, { numRuns: settings.runs, seed, interruptAfterTimeLimit: PROPERTY_TIME_LIMIT_MS })
  if (!details.failed || details.counterexample === null) return { finding: undefined, statuses }
  const [sent] = details.counterexample
  const failure = failures.get(sent) ?? { violations: [String(details.errorInstance)], response: undefined }
  return {
    statuses,
    finding: {
      operation: operation.id,
      route: `${operation.method} ${operation.path}`,
      category,
      caller: sent.caller,
      summary: sent.summary,
      violations: failure.violations,
      status: failure.response?.status,
      response: abbreviate(failure.response?.text ?? "(no answer)", 400),
      reproduction: asCurl(`http://127.0.0.1:${port}`, sent.request, TOKEN_VARIABLES[sent.caller]),
      seed,
      shrinks: details.numShrinks
    }
  }
}

export const formatFinding = (finding: Finding, settings: FuzzSettings): string =>
  [
    `${finding.route} (${finding.operation}), ${finding.category}:`,
    ...finding.violations.map((violation) => `  - ${violation}`),
    `  caller: ${finding.caller}; case: ${finding.summary}`,
    `  answer: ${finding.status ?? "none"} ${finding.response}`,
    `  reproduce: ${finding.reproduction}`,
    `  shrunk ${finding.shrinks} times; run again with FUZZ_SEED=${settings.seed} FUZZ_RUNS=${settings.runs}`
  ].join("\n")
