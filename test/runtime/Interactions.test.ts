/**
 * Tool calls that need a person: an approval approved and denied, a question answered and
 * declined; and the 409 rules of custom tool results (twice, built-in, awaiting approval).
 */
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { dockerPoolBody } from "../support/DockerPools.ts"
import { runtimeProject, text } from "../support/RuntimeProject.ts"
import { agentSource } from "../support/ScriptedModel.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure, joinOrganization, newUser } from "../support/TestApp.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

const completedTurns = (events: ReadonlyArray<{ event_kind: string; turn_status?: string }>) =>
  events.filter((event) => event.event_kind === "turn" && event.turn_status === "completed").length

/**
 * An agent whose only machine source is a docker pool (`providerConfig` its `provider_config`,
 * its image not on any host) calls `read_file`, then answers: its events once it is idle, and the
 * call's `tool_result`.
 */
const builtInCallOnDockerPool = (providerConfig: { readonly host?: string }) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const rt = yield* runtimeProject(provider)
    const auth = yield* rt.client.secrets.create({ params: { orgID: rt.org.id }, payload: { name: "docker-auth", value: Redacted.make("{}") } })
    const pool = yield* rt.client.machinePools.create({
      params: { orgID: rt.org.id },
      payload: { ...dockerPoolBody(auth.id), provider_config: providerConfig } as never
    })
    yield* rt.client.machinePools.createGrant({ params: { orgID: rt.org.id, poolID: pool.id }, payload: { target_project_id: rt.project.id } })
    const config = yield* rt.client.agentConfigs.create({
      params: rt.projectPath,
      payload: {
        source_format: "yaml",
        source: agentSource({ label: "pool", extraSource: ["machine_sources:", `  - machine_pool_id: ${pool.id}`] })
      }
    })
    yield* provider.script([Reply.toolCall("read_file", { path: "/etc/hosts" }), Reply.text("No machine then.")], { model: rt.slug })
    const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
    yield* rt.send(agent.id, "Read the hosts file")
    yield* rt.idle(agent.id)
    const events = yield* rt.events(agent.id)
    return { events, result: events.find((event) => event.event_kind === "tool_result") }
  })

describeRuntime()("interactions", (it) => {
  it.effect("approval approved: the call goes from awaiting_authorization to ready, takes its result, the turn completes", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.toolCall("deploy", { env: "prod" }), Reply.text("Deployed.")], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "Deploy please")
      yield* rt.waiting(agent.id)
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call.state).toBe("awaiting_authorization")
      const early = yield* expectFailure(rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("too early") }
      }))
      expect(early._tag).toBe("StateTransitionConflict")

      const pending = yield* rt.client.interactions.list({ params: rt.projectPath, query: { status: "pending" } })
      expect(pending.data).toHaveLength(1)
      const [approval] = pending.data
      expect(approval).toMatchObject({ kind: "approval", status: "pending", tool_call_id: call.id, agent_id: agent.id })
      // An answer is for questions: sent with an approval, it is refused, not dropped.
      const answered = yield* expectFailure(rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: approval.id },
        payload: { decision: "approve", answer: "yes please" }
      }))
      expect(answered).toMatchObject({
        _tag: "InvalidRequest",
        issues: [{ path: "/answer", message: "is for questions; an approval takes a decision and, if you like, a message" }]
      })
      const resolved = yield* rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: approval.id },
        payload: { decision: "approve", message: "go" }
      })
      expect(resolved).toMatchObject({ status: "resolved", decision: "approve", message: "go" })
      const twice = yield* expectFailure(rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: approval.id },
        payload: { decision: "deny" }
      }))
      expect(twice._tag).toBe("StateTransitionConflict")

      const [ready] = yield* rt.toolCalls(agent.id)
      expect(ready.state).toBe("ready")
      yield* rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("deployed v2") }
      })
      yield* rt.idle(agent.id)
      const events = yield* rt.events(agent.id)
      expect(events.map((event) => event.event_kind)).toEqual([
        "agent_input",
        "turn",
        "tool_call",
        "interaction",
        "interaction",
        "tool_result",
        "model_output",
        "turn"
      ])
      expect(events[3]).toMatchObject({ interaction_id: approval.id, interaction_kind: "approval", interaction_status: "opened" })
      expect(events[4]).toMatchObject({ interaction_status: "resolved" })
      expect(completedTurns(events)).toBe(1)
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      expect(JSON.stringify(requests[1].body)).toContain("deployed v2")
    }))

  it.effect("approval denied: the call fails with the reason, the model is told, the turn completes", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { format: "anthropic-messages" })
      yield* provider.script([Reply.toolCall("deploy", {}, "toolu_deny"), Reply.text("Understood, not deploying.")], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "Deploy please")
      yield* rt.waiting(agent.id)
      const [approval] = yield* rt.interactions(agent.id)
      yield* rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: approval.id },
        payload: { decision: "deny", message: "not on a Friday" }
      })
      yield* rt.idle(agent.id)
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ state: "completed", outcome: "failed" })
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      const toolResult = (requests[1].body!.messages as Array<any>).flatMap((message) => message.content)
        .find((block: any) => block.type === "tool_result")
      expect(toolResult).toMatchObject({ tool_use_id: "toolu_deny", is_error: true })
      expect(JSON.stringify(toolResult)).toContain("not on a Friday")
      const late = yield* expectFailure(rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("late") }
      }))
      expect(late._tag).toBe("StateTransitionConflict")
    }))

  it.effect("ask_question: a question opens, its answer is the tool's result; a built-in call takes no client result", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { format: "openai-chat-completions" })
      yield* provider.script([
        Reply.toolCall("ask_question", { question: "Which region?" }),
        Reply.text("Using eu-west.")
      ], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "Set up the service")
      yield* rt.waiting(agent.id)
      const [question] = yield* rt.interactions(agent.id)
      expect(question).toMatchObject({ kind: "question", status: "pending", question: "Which region?" })
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ name: "ask_question", type: "built_in", state: "running" })
      const builtIn = yield* expectFailure(rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("eu-west") }
      }))
      expect(builtIn._tag).toBe("StateTransitionConflict")
      const deniedWithAnswer = yield* expectFailure(rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: question.id },
        payload: { decision: "deny", answer: "eu-west" }
      }))
      expect(deniedWithAnswer).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/answer" }] })
      const answered = yield* rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: question.id },
        payload: { decision: "approve", answer: "eu-west" }
      })
      expect(answered).toMatchObject({ status: "resolved", answer: "eu-west" })
      yield* rt.idle(agent.id)
      const [done] = yield* rt.toolCalls(agent.id)
      expect(done).toMatchObject({ state: "completed", outcome: "succeeded" })
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      const toolMessage = (requests[1].body!.messages as Array<any>).find((message) => message.role === "tool")
      expect(toolMessage.content).toContain("eu-west")
    }))

  it.effect("a built-in tool of a config whose only machine source is a pool that cannot start a machine fails saying why", () =>
    Effect.gen(function*() {
      // The pool's image is not on the Docker host: the machine never starts, and the call says why.
      const { events, result } = yield* builtInCallOnDockerPool({})
      expect(result).toMatchObject({ outcome: "failed" })
      expect(JSON.stringify(result)).toContain("the provider failed to start it")
      expect(completedTurns(events)).toBe(1)
    }))

  it.effect("a built-in tool of a config whose pool's Docker host cannot be reached fails at once saying why", () =>
    Effect.gen(function*() {
      // The machine cannot be started, nor removed at the provider: its call fails anyway, at once.
      const { events, result } = yield* builtInCallOnDockerPool({ host: "unix:///nonexistent/agent-platform-test/docker.sock" })
      expect(result).toMatchObject({ outcome: "failed" })
      expect(JSON.stringify(result)).toContain("the provider failed to start it")
      expect(JSON.stringify(result)).toContain("/nonexistent/agent-platform-test/docker.sock")
      expect(completedTurns(events)).toBe(1)
    }))

  it.effect("an agent whose config uses its author's personal secret: only the author approves its calls and posts their results", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* rt.client.secrets.create({
        params: { orgID: rt.org.id },
        payload: { name: "owners-token", value: Redacted.make("owners-value"), owner: "personal" }
      })
      const config = yield* rt.client.agentConfigs.create({
        params: rt.projectPath,
        payload: { source_format: "yaml", source: agentSource({ label: "personal", extraSource: ["git_credentials:", "  token_secret: owners-token"] }) }
      })
      const colleague = yield* newUser("steering-colleague")
      yield* joinOrganization(rt.owner, rt.org.id, colleague, "admin")
      yield* provider.script([Reply.toolCall("deploy", { env: "prod" }), Reply.text("Deployed.")], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Deploy please")
      yield* rt.waiting(agent.id)
      const [approval] = yield* rt.interactions(agent.id)
      const approve = (client: typeof rt.client) =>
        client.interactions.resolve({ params: { ...rt.projectPath, interactionID: approval.id }, payload: { decision: "approve" } })
      expect(yield* expectFailure(approve(colleague.client))).toMatchObject({
        _tag: "Forbidden",
        error: expect.stringContaining("the personal secret owners-token")
      })
      expect((yield* approve(rt.client)).status).toBe("resolved")

      const [call] = yield* rt.toolCalls(agent.id)
      const submit = (client: typeof rt.client) =>
        client.toolCalls.submitResult({
          params: { ...rt.agentPath(agent.id), toolCallID: call.id },
          payload: { outcome: "succeeded", content_blocks: text("deployed to prod") }
        })
      expect(yield* expectFailure(submit(colleague.client))).toMatchObject({
        _tag: "Forbidden",
        error: expect.stringContaining("post their tool results")
      })
      yield* submit(rt.client)
      yield* rt.idle(agent.id)
      expect(completedTurns(yield* rt.events(agent.id))).toBe(1)
    }))
})
