/**
 * Values for the fields whose meaning the OpenAPI schema cannot express, so that valid bodies
 * get past the handlers' own checks: names, e-mail addresses, agent config sources that compile
 * against each tenant's provider config "Scripted" and model "Scripted model", provider URLs on
 * loopback only (a fuzzed provider config must never send a turn off this machine), skill texts
 * base64 media, and file digests and absolute paths of machines.
 */
import fc from "fast-check"
import { agentSource } from "../support/ScriptedModel.ts"
import type { FuzzWorld } from "./FuzzTenants.ts"

const JSON_SOURCE = JSON.stringify({
  instruction: "You are the fuzzing agent.",
  model: { provider_config: "Scripted", name: "Scripted model" },
  tools: { lookup: { type: "custom", description: "Looks a thing up", input_schema: { type: "object" } } }
})

type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>

const made = new WeakMap<FuzzWorld, Hints>()

export const fuzzHints = (world: FuzzWorld): Hints => {
  const existing = made.get(world)
  if (existing !== undefined) return existing
  const hints = makeHints(world)
  made.set(world, hints)
  return hints
}

const makeHints = (world: FuzzWorld): Hints => ({
  ResourceName: fc.stringMatching(/^[A-Z][a-z]{1,12}( [A-Za-z0-9]{1,8})?$/),
  Email: fc.stringMatching(/^[a-z]{3,10}$/).map((local) => `${local}-fuzz@example.test`),
  source: fc.constantFrom(agentSource({ label: "fuzzing" }), JSON_SOURCE),
  base_url: fc.constantFrom(world.providerUrl, "http://127.0.0.1:9/v1"),
  "SKILL.md": fc.string({ minLength: 1, maxLength: 40 }).map((text) => `# Skill\n${text}`),
  files: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}(\/[a-z]{1,8})?\.md$/), fc.string({ maxLength: 40 }), { maxKeys: 2 }),
  media_type: fc.constantFrom("image/png", "text/plain", "application/pdf"),
  data: fc.uint8Array({ minLength: 1, maxLength: 48 }).map((bytes) => Buffer.from(bytes).toString("base64")),
  // Longer than the generator's 40-character cap on patterned strings: it would never match.
  FileDigest: fc.constantFrom(`sha256:${"0".repeat(64)}`, `sha256:${"ab".repeat(32)}`),
  AbsolutePath: fc.constantFrom("/tmp", "/home/fuzz/work", "C:\\work")
})
