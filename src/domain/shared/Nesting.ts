/**
 * How deep arrays and objects may nest in what a request submits: a JSON body (the body scanner,
 * src/layers/http/JsonScanner.ts) and an agent config's source text, JSON or YAML
 * (src/domain/configuration/agent-config/JsonSyntax.ts, SourceLimits.ts). Both are checked
 * by linear scans before the code that recurses over them reads them (docs/api-conventions.md,
 * "Bodies"; docs/agent-configs.md, "Issues"). What the platform receives from daemons and models
 * is cut at the same depth where it comes in (src/services/shared/StorableJson.ts; docs/runtime.md,
 * "Text the platform receives").
 */
export const MAX_NESTING_DEPTH = 64
