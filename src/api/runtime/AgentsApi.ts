import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AgentBacklogFull,
  Forbidden,
  IdempotencyKeyConflict,
  InvalidRequest,
  NotFound,
  RequestTooLarge,
  StateTransitionConflict
} from "../../domain/shared/Errors.ts"
import { DecimalInteger } from "../../domain/shared/DecimalInteger.ts"
import { AgentId, ArtifactId, InputId, OrgId, ProjectId, TurnId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { ControlEvent, DEFAULT_EVENTS_LIMIT, EventsPage, EventsQuery } from "../../domain/runtime/Events.ts"
import { Agent, AgentStatus, Control, LaunchAgent, LaunchedAgent } from "../../domain/runtime/Agents.ts"
import { AgentInput, InputAccepted, SendInput } from "../../domain/runtime/Inputs.ts"
import { StreamToken } from "../../domain/runtime/StreamTokens.ts"
import { Turn } from "../../domain/runtime/Turns.ts"
import { ProjectPath } from "../tenancy/ProjectsApi.ts"
import { Authentication } from "../Security.ts"

export const AgentPath = Schema.Struct({ orgID: OrgId, projectID: ProjectId, agentID: AgentId })

export const SequenceParam = DecimalInteger(0)

export const AGENT = "/orgs/:orgID/projects/:projectID/agents/:agentID"

export class AgentsApi extends HttpApiGroup.make("agents")
  .annotate(OpenApi.Title, "Agents")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects/:projectID/agents")
      .annotate(OpenApi.Summary, "Launch an agent")
      .setPath(ProjectPath)
      .setPayload(LaunchAgent)
      .addSuccess(LaunchedAgent, { status: 201 })
      .addError(InvalidRequest.Wire)
      .addError(RequestTooLarge.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .annotate(
        OpenApi.Description,
        "Launches an idle agent running an agent config of the project. With `input`, that input is sent at once " +
          "and the answer carries its result as `input`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/agents")
      .annotate(OpenApi.Summary, "List the project's agents")
      .setPath(ProjectPath)
      .setUrlParams(Schema.Struct({ ...ListQuery.fields, status: Schema.optional(AgentStatus) }))
      .addSuccess(Page(Agent))
      .addError(NotFound.Wire)
      .annotate(OpenApi.Description, "Oldest first; `status` keeps the agents in that status")
  )
  .add(
    HttpApiEndpoint.get("get", AGENT)
      .annotate(OpenApi.Summary, "Get an agent")
      .setPath(AgentPath)
      .addSuccess(Agent)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.post("sendInput", `${AGENT}/inputs`)
      .annotate(OpenApi.Summary, "Send an input to an agent")
      .setPath(AgentPath)
      .setPayload(SendInput)
      .addSuccess(InputAccepted.annotations({ description: "a new input, started or queued" }), { status: 201 })
      .addSuccess(InputAccepted.annotations({ description: "the first answer under this input_idempotency_key" }))
      .addError(InvalidRequest.Wire)
      .addError(RequestTooLarge.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(IdempotencyKeyConflict.Wire)
      .addError(AgentBacklogFull.Wire)
      .addError(StateTransitionConflict.Wire)
      .annotate(
        OpenApi.Description,
        "Records an input: it starts a turn when the agent is idle, else waits in the backlog (at most 100 queued). " +
          "An agent of a workspace session whose worktree is being migrated takes no input (409 state_transition_conflict). " +
          "Inline media are stored as artifacts and recorded as media_ref blocks."
      )
  )
  .add(
    HttpApiEndpoint.get("listBacklog", `${AGENT}/backlog`)
      .annotate(OpenApi.Summary, "List the agent's queued inputs")
      .setPath(AgentPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(AgentInput))
      .addError(NotFound.Wire)
      .annotate(OpenApi.Description, "The queued inputs, oldest (next to run) first")
  )
  .add(
    HttpApiEndpoint.del("withdrawInput", `${AGENT}/backlog/:inputID`)
      .annotate(OpenApi.Summary, "Withdraw a queued input")
      .setPath(Schema.Struct({ ...AgentPath.fields, inputID: InputId }))
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(StateTransitionConflict.Wire)
      .annotate(OpenApi.Description, "Removes a queued input from the backlog; its turn never runs")
  )
  .add(
    HttpApiEndpoint.post("control", `${AGENT}/control`)
      .annotate(OpenApi.Summary, "Cancel the agent's current turn")
      .setPath(AgentPath)
      .setPayload(Control)
      .addSuccess(ControlEvent)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(StateTransitionConflict.Wire)
      .annotate(
        OpenApi.Description,
        "`cancel_current` stops the current turn and records a control event; the next queued input then runs. " +
          "With no turn running: state_transition_conflict."
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", `${AGENT}/events`)
      .annotate(OpenApi.Summary, "List the agent's events")
      .setPath(AgentPath)
      .setUrlParams(EventsQuery)
      .addSuccess(EventsPage)
      .addError(NotFound.Wire)
      .annotate(
        OpenApi.Description,
        `One page of the timeline, chronological within the page. limit: 1 to 500, default ${DEFAULT_EVENTS_LIMIT}.`
      )
  )
  .add(
    HttpApiEndpoint.post("mintStreamToken", `${AGENT}/events/stream-token`)
      .annotate(OpenApi.Summary, "Mint a token for the agent's event stream")
      .setPath(AgentPath)
      .addSuccess(StreamToken)
      .addError(NotFound.Wire)
      .annotate(
        OpenApi.Description,
        "A short-lived token (5 minutes) for this agent's event stream, sent as `?stream_token=` where a client " +
          "cannot send an Authorization header (a browser's EventSource). It acts as the calling API key: deleting " +
          "that key invalidates it."
      )
  )
  .add(
    HttpApiEndpoint.get("listTurns", `${AGENT}/turns`)
      .annotate(OpenApi.Summary, "List the agent's turns")
      .setPath(AgentPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Turn))
      .addError(NotFound.Wire)
      .annotate(OpenApi.Description, "Oldest first")
  )
  .add(
    HttpApiEndpoint.get("getTurn", `${AGENT}/turns/:turnID`)
      .annotate(OpenApi.Summary, "Get a turn")
      .setPath(Schema.Struct({ ...AgentPath.fields, turnID: TurnId }))
      .addSuccess(Turn)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("getArtifact", `${AGENT}/artifacts/:artifactID`)
      .annotate(OpenApi.Summary, "Download an artifact")
      .setPath(Schema.Struct({ ...AgentPath.fields, artifactID: ArtifactId }))
      .addSuccess(
        HttpApiSchema.Uint8Array().annotations({ description: "The bytes, served with the media type they were sent with" })
      )
      .addError(NotFound.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Agents: launch, inputs and backlog, control, timeline, turns and artifacts")
{}
