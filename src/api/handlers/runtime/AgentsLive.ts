import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { InputAccepted } from "../../../domain/runtime/Resources.ts"
import { AgentCommands } from "../../../services/runtime/AgentCommands.ts"
import { Agents } from "../../../services/runtime/Agents.ts"
import { Artifacts } from "../../../services/runtime/Artifacts.ts"
import { Api } from "../../Api.ts"

/** 201 is the endpoint's first success; an idempotent replay goes out as the declared 200. */
const replayedInput = HttpServerResponse.schemaJson(InputAccepted)

export const AgentsLive = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const commands = yield* AgentCommands
    const artifacts = yield* Artifacts
    return handlers
      .handle("create", ({ path, payload }) => commands.launch(path.orgID, path.projectID, payload))
      .handle("list", ({ path, urlParams }) => agents.list(path.orgID, path.projectID, urlParams))
      .handle("get", ({ path }) => agents.readAgent(path.orgID, path.projectID, path.agentID))
      .handle("sendInput", ({ path, payload }) =>
        Effect.flatMap(
          commands.sendInput(path.orgID, path.projectID, path.agentID, payload),
          ({ accepted, replayed }): Effect.Effect<InputAccepted | HttpServerResponse.HttpServerResponse> =>
            replayed ? replayedInput(accepted, { status: 200 }).pipe(Effect.orDie) : Effect.succeed(accepted)
        ))
      .handle("listBacklog", ({ path, urlParams }) =>
        agents.backlog(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("withdrawInput", ({ path }) =>
        commands.withdrawInput(path.orgID, path.projectID, path.agentID, path.inputID))
      .handle("control", ({ path }) => commands.cancelCurrent(path.orgID, path.projectID, path.agentID))
      .handle("listEvents", ({ path, urlParams }) => agents.events(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("streamEvents", ({ headers, path, urlParams }) =>
        Effect.map(
          agents.eventStream(
            path.orgID,
            path.projectID,
            path.agentID,
            headers["last-event-id"] ?? urlParams.after_sequence ?? 0
          ),
          (stream) =>
            HttpServerResponse.stream(stream, {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
            })
        ))
      .handle("listTurns", ({ path, urlParams }) => agents.turns(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("getTurn", ({ path }) => agents.turn(path.orgID, path.projectID, path.agentID, path.turnID))
      .handle("getArtifact", ({ path }) =>
        Effect.gen(function*() {
          yield* agents.readAgent(path.orgID, path.projectID, path.agentID)
          const artifact = yield* artifacts.get(path.agentID, path.artifactID)
          // The media type is the caller's: a browser must not sniff it or run the bytes as a page.
          return HttpServerResponse.uint8Array(artifact.bytes, {
            contentType: artifact.media_type,
            headers: {
              "x-content-type-options": "nosniff",
              "content-security-policy": "default-src 'none'; sandbox"
            }
          })
        }))
  }))
