import { parseSource } from "../src/domain/agent-config/Source.ts"
import { validateDefinition } from "../src/domain/agent-config/Validate.ts"
const yaml = `# a config
instruction: "  "
model:
  provider_config: p
  name: 5
  extra: 1
version: v2
max_depth: 9
bogus: 1
tools:
  bad name: {}
  ok:
    permission: maybe
    input_schema: { a: .inf }
machine_sources:
  - secret_env_overlay: { 1X: a }
mcp: { m: { url: "ftp://x" } }
`
const p = parseSource(yaml, "yaml")
if (p._tag === "Parsed") console.log(JSON.stringify(validateDefinition(p.source), null, 1)); else console.log(p)
console.log(parseSource("a: [1, 2\nb: c", "yaml"))
console.log(parseSource('{"a": 1,\n "b": }', "json"))
console.log(parseSource('{"a": 1, // c\n "b": 2}', "json"))
const j = parseSource('{\n  "instruction": "hi",\n  "model": {"provider_config": "p"}\n}', "json")
if (j._tag === "Parsed") console.log(validateDefinition(j.source))
