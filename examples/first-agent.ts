/**
 * A first agent through the typed client (src/api/Client.ts), against a running server and the
 * demo model:
 *
 *   AGENT_PLATFORM_BOOTSTRAP_TOKEN=my-admin-token npm start     # shell 1
 *   npm run demo-model                                          # shell 2
 *   npx tsx examples/first-agent.ts                             # shell 3
 *
 * It finds or creates (by name, so it can run again) the organization "Acme" and the project
 * "Support bot" of the README's first session (a personal machine's daemon needs no --org while its
 * user has one organization), the demo model and an agent config from
 * examples/agent-configs/demo.yaml; launches an agent; watches its events stream, printing the
 * live text as it comes; and makes a custom tool call round trip.
 *
 * Environment: AGENT_PLATFORM_URL (http://127.0.0.1:8787), AGENT_PLATFORM_TOKEN (my-admin-token),
 * DEMO_MODEL_URL (http://127.0.0.1:8788/v1).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Fiber, Option, Stream } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { type Client, makeClient, streamAgentEvents } from "../src/api/Client.ts"

const baseUrl = process.env.AGENT_PLATFORM_URL ?? "http://127.0.0.1:8787"
const token = process.env.AGENT_PLATFORM_TOKEN ?? "my-admin-token"
const demoModelUrl = process.env.DEMO_MODEL_URL ?? "http://127.0.0.1:8788/v1"
const configSource = readFileSync(join(import.meta.dirname, "agent-configs", "demo.yaml"), "utf8")

/** The first item of a list page that `matches`, else the one `create` makes. */
const findOrCreate = <A, E, R, E2, R2>(
  page: Effect.Effect<{ readonly data: ReadonlyArray<A> }, E, R>,
  matches: (item: A) => boolean,
  create: Effect.Effect<A, E2, R2>
) => Effect.flatMap(page, (found) => Option.match(Option.fromNullishOr(found.data.find(matches)), { onNone: () => create, onSome: Effect.succeed }))

const setUp = (client: Client) =>
  Effect.gen(function*() {
    const org = yield* findOrCreate(
      client.organizations.list({ query: { limit: 100 } }),
      (org) => org.name === "Acme",
      client.organizations.create({ payload: { name: "Acme" } })
    )
    const orgID = org.id
    const project = yield* findOrCreate(
      client.projects.list({ params: { orgID }, query: { limit: 100 } }),
      (project) => project.name === "Support bot",
      client.projects.create({ params: { orgID }, payload: { name: "Support bot" } })
    )
    const provider = yield* findOrCreate(
      client.modelProviderConfigs.list({ params: { orgID }, query: { limit: 100 } }),
      (provider) => provider.name === "demo",
      client.modelProviderConfigs.create({
        params: { orgID },
        payload: { name: "demo", api_format: "openai-responses", base_url: demoModelUrl }
      })
    )
    const model = yield* findOrCreate(
      client.models.list({ params: { orgID }, query: { limit: 100 } }),
      (model) => model.name === "demo" && model.provider_config_id === provider.id,
      client.models.create({
        params: { orgID },
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
    )
    yield* findOrCreate(
      client.models.listGrants({ params: { orgID, modelID: model.id }, query: { limit: 100 } }),
      (grant) => grant.target_project_id === project.id,
      client.models.createGrant({ params: { orgID, modelID: model.id }, payload: { target_project_id: project.id } })
    )
    const projectPath = { orgID, projectID: project.id }
    const config = yield* findOrCreate(
      client.agentConfigs.list({ params: projectPath, query: { limit: 100 } }),
      (config) => config.source === configSource,
      client.agentConfigs.create({ params: projectPath, payload: { source: configSource, source_format: "yaml" } })
    )
    return { projectPath, config }
  })

const program = Effect.gen(function*() {
  const client = yield* makeClient({ baseUrl, token })
  const { config, projectPath } = yield* setUp(client)
  const agent = yield* client.agents.create({ params: projectPath, payload: { agent_config_id: config.id, name: "first-agent" } })
  const agentPath = { ...projectPath, agentID: agent.id }
  yield* Console.log(`agent ${agent.id}`)

  // The events stream: live text as it comes; a `lookup` call answered here; stop after the second answer.
  let answers = 0
  const watcher = yield* streamAgentEvents({ baseUrl, token }, agentPath).pipe(
    Stream.tap((item) => {
      if (item.type === "delta") return Effect.sync(() => process.stdout.write(item.delta.kind === "text" ? item.delta.delta : ""))
      const event = item.event
      switch (event.event_kind) {
        case "model_output":
          answers++
          return Console.log("\n[model_output stored]")
        case "tool_call":
          if (event.tool_name !== "lookup") return Effect.void
          return Effect.gen(function*() {
            yield* Console.log(`[tool_call ${event.tool_name} ${JSON.stringify(event.tool_input)}: answering "Sunny, 21 C"]`)
            yield* client.toolCalls.submitResult({
              params: { ...agentPath, toolCallID: event.tool_call_id },
              payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "Sunny, 21 C" }] }
            })
          })
        default:
          return Effect.void
      }
    }),
    Stream.takeUntil(() => answers === 2),
    Stream.runDrain,
    Effect.forkChild
  )

  yield* client.agents.sendInput({ params: agentPath, payload: { content_blocks: [{ type: "text", text: "Say hello, slowly" }] } })
  // The second input waits in the backlog until the first turn has ended.
  yield* client.agents.sendInput({
    params: agentPath,
    payload: { content_blocks: [{ type: "text", text: `call lookup {"query": "weather in Paris"}` }] }
  })
  yield* Fiber.join(watcher).pipe(Effect.timeout("60 seconds"))
  const turns = yield* client.agents.listTurns({ params: agentPath, query: {} })
  yield* Console.log(`turns: ${turns.data.map((turn) => turn.status).join(", ")}`)
})

program.pipe(Effect.provide(NodeHttpClient.layerUndici), Effect.runPromise).catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
