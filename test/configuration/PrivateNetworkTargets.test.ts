/**
 * AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS on (the hosted profile): a model provider base_url, an
 * MCP server, event webhook or interaction handler URL whose host is a private, loopback or
 * link-local address is refused where it is configured (400 at the field); a host name that
 * resolves to one is refused when the model is called (the turn fails saying why). Off (the
 * default) every runtime test calls the scripted provider on loopback.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { agentProject } from "../support/AgentProject.ts"
import { eventually } from "../support/Polling.ts"
import { describeApp, expectFailure, newUser, rawRequest } from "../support/TestApp.ts"

const REFUSED = [
  "http://169.254.169.254/latest",
  "http://127.0.0.1:5432/v1",
  "http://127.1/v1",
  "http://2130706433/v1",
  "http://0x7f000001/v1",
  "http://0.0.0.0:8080/v1",
  "http://10.1.2.3/v1",
  "http://172.16.0.1/v1",
  "http://172.31.255.254/v1",
  "https://192.168.1.10/v1",
  "http://[::1]:5432/v1",
  "http://[::]/v1",
  "http://[fc00::1]/v1",
  "http://[fd12:3456::1]/v1",
  "http://[fe80::1]/v1",
  "http://[::ffff:127.0.0.1]/v1",
  "http://[::ffff:a9fe:a9fe]/v1",
  "http://[::127.0.0.1]/v1"
]

const ALLOWED = [
  "https://api.openai.com/v1",
  "http://172.32.0.1/v1",
  "http://192.169.0.1/v1",
  "http://8.8.8.8/v1",
  "http://[2606:4700::1111]/v1",
  // A name is judged by what it resolves to when it is called, not here.
  "http://localhost:9/v1"
]

describeApp({ blockPrivateNetworks: true })("private network targets refused", (it) => {
  it.effect("model provider base_url: a private address literal is 400 at /base_url, on create and update", () =>
    Effect.gen(function*() {
      const { client } = yield* newUser("admin")
      const org = yield* client.organizations.create({ payload: { name: "Hosted" } })
      const secret = yield* client.secrets.create({ params: { orgID: org.id }, payload: { name: "key", value: Redacted.make("sk-x") } })
      let index = 0
      const create = (base_url: string) =>
        client.modelProviderConfigs.create({
          params: { orgID: org.id },
          payload: { name: `P${index++}`, api_format: "openai-responses", base_url, auth_secret_id: secret.id }
        })
      for (const url of REFUSED) {
        const refused = yield* expectFailure(create(url))
        expect(refused._tag, url).toBe("InvalidRequest")
        expect(refused, url).toMatchObject({
          issues: [{ path: "/base_url", message: expect.stringContaining("must not point at a private, loopback or link-local address") }]
        })
      }
      const created = yield* Effect.forEach(ALLOWED, create)
      expect(created.map((config) => config.base_url)).toEqual(ALLOWED)

      const patched = yield* expectFailure(
        client.modelProviderConfigs.update({
          params: { orgID: org.id, modelProviderConfigID: created[0].id },
          payload: { base_url: "http://169.254.169.254/v1" }
        })
      )
      expect(patched).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/base_url" }] })
      const unchanged = yield* client.modelProviderConfigs.get({ params: { orgID: org.id, modelProviderConfigID: created[0].id } })
      expect(unchanged.base_url).toBe(ALLOWED[0])
    }))

  it.effect("agent configs: MCP (own and subagents'), webhook and interaction handler URLs at private addresses are 400 at the field", () =>
    Effect.gen(function*() {
      const setup = yield* agentProject({ label: "Hosted", baseUrl: "http://localhost:9/v1" })
      const path = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agent-configs`
      const send = (extra: string) =>
        rawRequest(
          HttpClientRequest.post(path).pipe(
            HttpClientRequest.bearerToken(setup.owner.token),
            HttpClientRequest.bodyJsonUnsafe({
              source: `instruction: Hi\nmodel:\n  provider_config: Scripted\n  name: Scripted model\n${extra}`,
              source_format: "yaml"
            })
          )
        )
      const refused = yield* send([
        "mcp:",
        "  metadata:",
        "    url: http://169.254.169.254/latest/meta-data",
        "  docs:",
        "    url: https://mcp.example.com/mcp",
        "subagents:",
        "  helper:",
        "    description: Helps",
        "    instruction: Help",
        "    mcp:",
        "      db:",
        "        url: http://[::ffff:10.0.0.5]:5432/",
        "event_webhook:",
        "  url: http://[fd00::1]/hook",
        "interaction_handlers:",
        "  ops:",
        "    type: webhook",
        "    url: http://192.168.0.2/approve",
        ""
      ].join("\n"))
      expect(refused.status).toBe(400)
      expect(refused.json).toMatchObject({
        code: "validation_failed",
        issues: [
          { path: "/mcp/metadata/url", line: 7, message: expect.stringContaining("169.254.169.254 is link-local") },
          { path: "/subagents/helper/mcp/db/url", line: 16, message: expect.stringContaining("private") },
          { path: "/event_webhook/url", line: 18, message: expect.stringContaining("unique-local") },
          { path: "/interaction_handlers/ops/url", line: 22, message: expect.stringContaining("192.168.0.2 is private") }
        ]
      })
      expect(refused.json!.issues).toHaveLength(4)

      const allowed = yield* send("mcp:\n  docs:\n    url: https://mcp.example.com/mcp\n")
      expect(allowed.status).toBe(201)
    }))

  it.effect("a base_url host name resolving to loopback: the call is refused and the turn fails saying why", () =>
    Effect.gen(function*() {
      const setup = yield* agentProject({ label: "Hosted", baseUrl: "http://localhost:9/v1" })
      const agent = yield* setup.launch()
      const agentPath = { ...setup.projectPath, agentID: agent.id }
      const input = yield* setup.owner.client.agents.sendInput({
        params: agentPath,
        payload: { content_blocks: [{ type: "text", text: "hello" }] }
      })
      const turn = yield* eventually(
        setup.owner.client.agents.getTurn({ params: { ...agentPath, turnID: input.event.turn_id! } }),
        (found) => found.status === "failed",
        "the turn to fail"
      )
      expect(turn.error).toContain("The model provider was not called")
      expect(turn.error).toContain("localhost resolves to 127.0.0.1, a loopback address")
      expect(turn.error).toContain("AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS")
      expect(turn.model_calls).toBe(0)
    }))
})
