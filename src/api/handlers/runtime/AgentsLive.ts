import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { InputAccepted } from "../../../domain/runtime/Inputs.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { AgentControl } from "../../../services/runtime/AgentControl.ts"
import { AgentEvents } from "../../../services/runtime/AgentEvents.ts"
import { AgentInputs } from "../../../services/runtime/AgentInputs.ts"
import { Agents } from "../../../services/runtime/Agents.ts"
import { Artifacts } from "../../../services/runtime/Artifacts.ts"
import { StreamTokens } from "../../../services/runtime/StreamTokens.ts"
import { Turns } from "../../../services/runtime/Turns.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

/** 201 is the endpoint's first success; an idempotent replay goes out as the declared 200. */
const replayedInput = HttpServerResponse.schemaJson(InputAccepted)

export const AgentsLive = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const inputs = yield* AgentInputs
    const control = yield* AgentControl
    const events = yield* AgentEvents
    const streamTokens = yield* StreamTokens
    const turns = yield* Turns
    const artifacts = yield* Artifacts
    return handlers
      .handle("create", ({ path, payload }) => agents.launch(path.orgID, path.projectID, payload))
      .handle("list", ({ path, urlParams }) => agents.list(path.orgID, path.projectID, urlParams))
      .handle("get", ({ path }) => agents.get(path.orgID, path.projectID, path.agentID))
      .handle("sendInput", ({ path, payload }) =>
        Effect.flatMap(
          inputs.send(path.orgID, path.projectID, path.agentID, payload),
          ({ accepted, replayed }): Effect.Effect<InputAccepted | HttpServerResponse.HttpServerResponse> =>
            replayed ? replayedInput(accepted, { status: 200 }).pipe(Effect.orDie) : Effect.succeed(accepted)
        ))
      .handle("listBacklog", ({ path, urlParams }) => inputs.backlog(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("withdrawInput", ({ path }) => inputs.withdraw(path.orgID, path.projectID, path.agentID, path.inputID))
      .handle("control", ({ path }) => control.cancelCurrent(path.orgID, path.projectID, path.agentID))
      // The page is read as JSON text (AgentEventsRepository): sent as it is.
      .handle("listEvents", ({ path, urlParams }) =>
        Effect.map(
          events.list(path.orgID, path.projectID, path.agentID, urlParams),
          (page) => HttpServerResponse.text(page, { contentType: "application/json" })
        ))
      .handle("mintStreamToken", ({ path }) => streamTokens.mint(path.orgID, path.projectID, path.agentID))
      .handle("listTurns", ({ path, urlParams }) => turns.list(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("getTurn", ({ path }) => turns.get(path.orgID, path.projectID, path.agentID, path.turnID))
      .handle("getArtifact", ({ path }) =>
        Effect.gen(function*() {
          yield* agents.get(path.orgID, path.projectID, path.agentID)
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
  .pipe(builtWithOnly(AgentControl, AgentEvents, Artifacts, AgentInputs, Agents, StreamTokens, Turns, Authentication))
