/**
 * The demo model (`npm run demo-model`) as a real child process, and the platform calling it
 * through provider configs of both OpenAI formats: an agent answers, a custom tool call makes
 * the round trip (call, result posted through the API, answer from the result), `run <command>`
 * asks for `run_command`, and "slowly" streams one word every ~200 ms.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { DemoModelProcess } from "../support/DemoModelProcess.ts"
import { dockerPoolBody } from "../support/DockerPools.ts"
import { eventually } from "../support/Polling.ts"
import { newUser, TestAppLive } from "../support/TestApp.ts"

const TestLive = Layer.merge(TestAppLive(), DemoModelProcess.layer)

/**
 * The config; its only machine source a docker pool whose image is not on the Docker host: the
 * pool cannot start the machine, and the call fails saying why.
 */
const configSource = (poolId: string) => [
  "instruction: You are a demo agent.",
  "model:",
  "  provider_config: Demo",
  "  name: demo",
  "tools:",
  "  lookup:",
  "    type: custom",
  "    description: Looks a thing up",
  "    input_schema: { type: object, properties: { query: { type: string } } }",
  "  run_command:",
  "    permission: allow",
  "machine_sources:",
  `  - machine_pool_id: ${poolId}`,
  ""
].join("\n")

/** A user, org and project whose model "demo" is the demo model in `format`, and an agent config on it. */
const demoProject = (format: ApiFormat) =>
  Effect.gen(function*() {
    const demo = yield* DemoModelProcess
    const { client } = yield* newUser("demo")
    const org = yield* client.organizations.create({ payload: { name: "Demo" } })
    const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Try" } })
    const provider = yield* client.modelProviderConfigs.create({
      params: { orgID: org.id },
      payload: { name: "Demo", api_format: format, base_url: demo.baseUrl }
    })
    const model = yield* client.models.create({
      params: { orgID: org.id },
      payload: {
        provider_config_id: provider.id,
        name: "demo",
        provider_model_slug: "demo",
        context_window_tokens: 100_000,
        supports_tools: true,
        supports_reasoning: false,
        input_modalities: ["text"],
        output_modalities: ["text"]
      }
    })
    yield* client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
    const auth = yield* client.secrets.create({ params: { orgID: org.id }, payload: { name: "docker-auth", value: Redacted.make("{}") } })
    const pool = yield* client.machinePools.create({
      params: { orgID: org.id },
      payload: dockerPoolBody(auth.id) as never
    })
    yield* client.machinePools.createGrant({ params: { orgID: org.id, poolID: pool.id }, payload: { target_project_id: project.id } })
    const config = yield* client.agentConfigs.create({
      params: { orgID: org.id, projectID: project.id },
      payload: { source: configSource(pool.id), source_format: "yaml" }
    })
    const projectPath = { orgID: org.id, projectID: project.id }
    const launch = (text: string) =>
      client.agents.create({
        params: projectPath,
        payload: { agent_config_id: config.id, input: { content_blocks: [{ type: "text", text }] } }
      })
    const agentPath = (agentID: AgentId) => ({ ...projectPath, agentID })
    const idle = (agentID: AgentId) =>
      eventually(
        client.agents.get({ params: agentPath(agentID) }),
        (agent) => agent.status === "idle" && agent.current_turn_id === null,
        "the agent to be idle"
      )
    const outputs = (agentID: AgentId) =>
      Effect.map(client.agents.listEvents({ params: agentPath(agentID), query: { limit: 500 } }), (page) =>
        page.data.flatMap((event) =>
          event.event_kind === "model_output"
            ? event.content_blocks.flatMap((block) => block.type === "text" ? [block.text] : [])
            : []
        ))
    return { client, projectPath, agentPath, launch, idle, outputs }
  })

layer(TestLive, { timeout: "60 seconds", excludeTestServices: true })("demo model", (it) => {
  for (const format of ["openai-responses", "openai-chat-completions"] as const) {
    it.effect(`${format}: an agent answers through it`, () =>
      Effect.gen(function*() {
        const { idle, launch, outputs } = yield* demoProject(format)
        const agent = yield* launch("Hello, demo")
        yield* idle(agent.id)
        expect(yield* outputs(agent.id)).toEqual(["You said: Hello, demo"])
      }))

    it.effect(`${format}: a custom tool call round trip`, () =>
      Effect.gen(function*() {
        const { agentPath, client, idle, launch, outputs } = yield* demoProject(format)
        const agent = yield* launch(`call lookup {"query": "weather"}`)
        const calls = yield* eventually(
          client.toolCalls.list({ params: agentPath(agent.id), query: {} }),
          (page) => page.data.length === 1 && page.data[0].state === "ready",
          "the lookup call"
        )
        const call = calls.data[0]
        expect(call).toMatchObject({ name: "lookup", type: "custom", input: { query: "weather" } })
        yield* client.toolCalls.submitResult({
          params: { ...agentPath(agent.id), toolCallID: call.id },
          payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "Sunny, 21 C" }] }
        })
        yield* idle(agent.id)
        expect(yield* outputs(agent.id)).toEqual(["lookup answered: Sunny, 21 C"])
      }))
  }

  it.effect("`run <command>` calls run_command; when the pool cannot start a machine, its failure is what the model answers from", () =>
    Effect.gen(function*() {
      const { agentPath, client, idle, launch, outputs } = yield* demoProject("openai-responses")
      const agent = yield* launch("run echo hi")
      yield* idle(agent.id)
      const calls = yield* client.toolCalls.list({ params: agentPath(agent.id), query: {} })
      expect(calls.data.map((call) => [call.name, call.input])).toEqual([["run_command", { command: "echo hi" }]])
      const [answer] = yield* outputs(agent.id)
      expect(answer).toMatch(
        /^run_command answered: The tool call failed\.\nupstream_unavailable: Pool machine mch_\w+ did not start \(the provider failed to start it: /
      )
    }))

  it.effect("a tool the request does not offer is not called; the answer says which tools there are", () =>
    Effect.gen(function*() {
      const { idle, launch, outputs } = yield* demoProject("openai-chat-completions")
      const agent = yield* launch("call deploy {}")
      yield* idle(agent.id)
      expect(yield* outputs(agent.id)).toEqual(["I cannot call deploy: the tools offered are ask_question, edit_file, list_files, lookup, read_file, run_command, search_files, write_file."])
    }))

  it.effect("a second demo model on a port in use says so in one line and exits 1", () =>
    Effect.gen(function*() {
      const demo = yield* DemoModelProcess
      const port = new URL(demo.baseUrl).port
      const second = spawnSync(process.execPath, ["src/demo/main.ts"], {
        cwd: join(import.meta.dirname, "..", ".."),
        env: { ...process.env, PORT: port, HOST: "127.0.0.1" },
        encoding: "utf8",
        timeout: 30_000
      })
      expect(second.status).toBe(1)
      expect(second.stderr.trim()).toBe(`127.0.0.1:${port} is in use; set PORT (e.g. PORT=8790 npm run demo-model)`)
    }))

  it.effect("every agent config of examples/agent-configs compiles (provider configs demo and openai, models demo and fast)", () =>
    Effect.gen(function*() {
      const demo = yield* DemoModelProcess
      const { client } = yield* newUser("examples")
      const org = yield* client.organizations.create({ payload: { name: "Examples" } })
      const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Configs" } })
      for (const [providerName, modelName] of [["demo", "demo"], ["openai", "fast"]] as const) {
        const provider = yield* client.modelProviderConfigs.create({
          params: { orgID: org.id },
          payload: { name: providerName, api_format: "openai-responses", base_url: demo.baseUrl }
        })
        const model = yield* client.models.create({
          params: { orgID: org.id },
          payload: {
            provider_config_id: provider.id,
            name: modelName,
            provider_model_slug: modelName,
            context_window_tokens: 100_000,
            supports_tools: true,
            supports_reasoning: false,
            input_modalities: ["text"],
            output_modalities: ["text"]
          }
        })
        yield* client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
      }
      const folder = join(import.meta.dirname, "..", "..", "examples", "agent-configs")
      const files = readdirSync(folder).filter((file) => file.endsWith(".yaml"))
      expect(files.length).toBeGreaterThanOrEqual(3)
      for (const file of files) {
        const source = readFileSync(join(folder, file), "utf8")
        const config = yield* client.agentConfigs.create({
          params: { orgID: org.id, projectID: project.id },
          payload: { source, source_format: "yaml" }
        })
        expect(config.source).toBe(source)
      }
    }))

  it.effect("\"slowly\" streams one word every ~200 ms; an unknown route is an OpenAI-shaped 404", () =>
    Effect.gen(function*() {
      const demo = yield* DemoModelProcess
      const started = Date.now()
      const times: Array<number> = []
      const text = yield* Effect.promise(async () => {
        const response = await fetch(`${demo.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "demo", stream: true, messages: [{ role: "user", content: "tell it slowly" }] })
        })
        const decoder = new TextDecoder()
        let all = ""
        for await (const chunk of response.body!) {
          all += decoder.decode(chunk as Uint8Array, { stream: true })
          times.push(Date.now() - started)
        }
        return all
      })
      const pieces = text.split("\n\n").flatMap((frame) => {
        const data = frame.replace(/^data: /, "")
        if (data === "" || data === "[DONE]") return []
        const content = JSON.parse(data).choices[0]?.delta?.content
        return typeof content === "string" && content !== "" ? [content] : []
      })
      expect(pieces).toEqual(["You ", "said: ", "tell ", "it ", "slowly"])
      expect(times[times.length - 1]).toBeGreaterThanOrEqual(5 * 190)

      const missing = yield* Effect.promise(() => fetch(`${demo.baseUrl}/embeddings`, { method: "POST", body: "{}" }))
      expect(missing.status).toBe(404)
      expect(yield* Effect.promise(() => missing.json())).toMatchObject({ error: { type: "invalid_request_error" } })
      expect(demo.output()).toContain("POST /v1/chat/completions (streamed): text, slowly")
    }))
})
