/**
 * A secret's value where an agent config expects a secret's name (`mcp.*.auth.secret`, and the
 * other secret references) is refused with 400 without the value in the answer, whatever its
 * shape: an array, an object, a number, a string too long for a name; in YAML and JSON sources.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { agentProject } from "../support/AgentProject.ts"
import { describeApp, rawRequest } from "../support/TestApp.ts"

const VALUE = "sk-live-do-not-echo-4242"
const SHAPES: ReadonlyArray<unknown> = [[VALUE], { key: VALUE }, { nested: [VALUE] }, 4242, VALUE.repeat(10), true]

const definition = (secret: unknown, field: "mcp" | "webhook" | "git") => ({
  instruction: "Hi",
  model: { provider_config: "Scripted", name: "Scripted model" },
  ...(field === "mcp" ? { mcp: { docs: { url: "https://mcp.example.com/mcp", auth: { type: "bearer", secret } } } } : {}),
  ...(field === "webhook" ? { event_webhook: { url: "https://hooks.example.com/a", signing_secret: secret } } : {}),
  ...(field === "git" ? { git_credentials: { token_secret: secret } } : {})
})

/** The same definition as YAML (flow style: every JSON document is YAML). */
const yamlOf = (value: object) => `# a config\n${JSON.stringify(value, null, 2)}\n`

describeApp()("agent config secret values in validation errors", (it) => {
  it.effect("mcp.*.auth.secret holding a value instead of a name: 400 at the field, the value never quoted", () =>
    Effect.gen(function*() {
      const setup = yield* agentProject({ label: "SecretEcho" })
      const path = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agent-configs`
      for (const field of ["mcp", "webhook", "git"] as const) {
        const pointer = field === "mcp"
          ? "/mcp/docs/auth/secret"
          : field === "webhook"
          ? "/event_webhook/signing_secret"
          : "/git_credentials/token_secret"
        for (const shape of SHAPES) {
          for (const format of ["json", "yaml"] as const) {
            const source = format === "json" ? JSON.stringify(definition(shape, field)) : yamlOf(definition(shape, field))
            const response = yield* rawRequest(
              HttpClientRequest.post(path).pipe(
                HttpClientRequest.bearerToken(setup.owner.token),
                HttpClientRequest.bodyJsonUnsafe({ source, source_format: format })
              )
            )
            expect(response.status).toBe(400)
            expect(response.json).toMatchObject({ code: "validation_failed", issues: [{ path: pointer }] })
            const message = (response.json!.issues as ReadonlyArray<{ message: string }>)[0].message
            expect(message).toMatch(typeof shape === "string" ? /at most 64 characters/ : /^Expected string, got /)
            expect(response.text).not.toContain(VALUE)
            expect(response.text).not.toContain("4242")
            expect(response.text).not.toContain("actual")
          }
        }
      }
    }))
})
