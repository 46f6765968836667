import { Either, ParseResult, Schema } from "effect"
import { AgentConfigDefinition } from "../src/domain/agent-config/Definition.ts"
const r = Schema.decodeUnknownEither(AgentConfigDefinition, { errors: "all", onExcessProperty: "error" })({
  instruction: "  ", model: { provider_config: "p", name: 5, extra: 1 }, version: "v2", max_depth: 9, bogus: 1,
  tools: { "bad name": {}, ok: { permission: "maybe", input_schema: { a: Infinity } } },
  machine_sources: [{ secret_env_overlay: { "1X": "a" } }], mcp: { m: { url: "ftp://x" } }
})
if (Either.isLeft(r)) console.log(JSON.stringify(ParseResult.ArrayFormatter.formatErrorSync(r.left), null, 1))
