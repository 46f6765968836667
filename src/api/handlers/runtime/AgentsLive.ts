import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
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
import { ApiErrors } from "../../ApiErrors.ts"
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
      .handle("create", ({ params, payload }) => agents.launch(params.orgID, params.projectID, payload))
      .handle("list", ({ params, query }) => agents.list(params.orgID, params.projectID, query))
      .handle("get", ({ params }) => agents.get(params.orgID, params.projectID, params.agentID))
      .handle("sendInput", ({ params, payload }) =>
        Effect.flatMap(
          inputs.send(params.orgID, params.projectID, params.agentID, payload),
          ({ accepted, replayed }): Effect.Effect<InputAccepted | HttpServerResponse.HttpServerResponse> =>
            replayed ? replayedInput(accepted, { status: 200 }).pipe(Effect.orDie) : Effect.succeed(accepted)
        ))
      .handle("listBacklog", ({ params, query }) => inputs.backlog(params.orgID, params.projectID, params.agentID, query))
      .handle("withdrawInput", ({ params }) => inputs.withdraw(params.orgID, params.projectID, params.agentID, params.inputID))
      .handle("control", ({ params, payload }) => control.cancelCurrent(params.orgID, params.projectID, params.agentID, payload))
      // The page is read as JSON text (AgentEventsRepository): sent as it is.
      .handle("listEvents", ({ params, query }) =>
        Effect.map(
          events.list(params.orgID, params.projectID, params.agentID, query),
          (page) => HttpServerResponse.text(page, { contentType: "application/json" })
        ))
      .handle("mintStreamToken", ({ params }) => streamTokens.mint(params.orgID, params.projectID, params.agentID))
      .handle("listTurns", ({ params, query }) => turns.list(params.orgID, params.projectID, params.agentID, query))
      .handle("getTurn", ({ params }) => turns.get(params.orgID, params.projectID, params.agentID, params.turnID))
      .handle("getArtifact", ({ params }) =>
        Effect.gen(function*() {
          yield* agents.get(params.orgID, params.projectID, params.agentID)
          const artifact = yield* artifacts.get(params.agentID, params.artifactID)
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
  .pipe(builtWithOnly(AgentControl, AgentEvents, Artifacts, AgentInputs, Agents, StreamTokens, Turns, Authentication, ApiErrors))
