import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
import { optional } from "../../domain/shared/Optional.ts"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects/:projectID/agents", {
      params: ProjectPath,
      payload: LaunchAgent,
      success: LaunchedAgent.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest.Wire, RequestTooLarge.Wire, NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Launch an agent")
      .annotate(
        OpenApi.Description,
        "Launches an idle agent running an agent config of the project. With `input`, that input is sent at once " +
          "and the answer carries its result as `input`. Needs project write access; 403 when the config uses " +
          "another member's personal secrets or machine."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/agents", {
      params: ProjectPath,
      query: Schema.Struct({ ...ListQuery.fields, status: optional(AgentStatus) }),
      success: Page(Agent),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the project's agents")
      .annotate(
        OpenApi.Description,
        "Oldest first; paginated (limit, cursor); `status` keeps the agents in that status. Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.get("get", AGENT, {
      params: AgentPath,
      success: Agent,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get an agent")
      .annotate(
        OpenApi.Description,
        "Needs project read access (any member of the organization has it). 404 for an agent that is not " +
          "in this project."
      )
  )
  .add(
    HttpApiEndpoint.post("sendInput", `${AGENT}/inputs`, {
      params: AgentPath,
      payload: SendInput,
      success: [
        InputAccepted.annotate({ description: "a new input, started or queued" }).pipe(HttpApiSchema.status(201)),
        InputAccepted.annotate({ description: "the first answer under this input_idempotency_key" })
      ],
      error: [
        InvalidRequest.Wire,
        RequestTooLarge.Wire,
        NotFound.Wire,
        Forbidden.Wire,
        IdempotencyKeyConflict.Wire,
        AgentBacklogFull.Wire,
        StateTransitionConflict.Wire
      ]
    })
      .annotate(OpenApi.Summary, "Send an input to an agent")
      .annotate(
        OpenApi.Description,
        "Records an input: it starts a turn when the agent is idle, else waits in the backlog (at most 100 queued). " +
          "An agent of a workspace session whose worktree is being migrated takes no input (409 state_transition_conflict). " +
          "Inline media are stored as artifacts and recorded as media_ref blocks. Needs project write access; 403 when " +
          "the agent's config uses another member's personal secrets or machine."
      )
  )
  .add(
    HttpApiEndpoint.get("listBacklog", `${AGENT}/backlog`, {
      params: AgentPath,
      query: ListQuery,
      success: Page(AgentInput),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the agent's queued inputs")
      .annotate(
        OpenApi.Description,
        "The queued inputs, oldest (next to run) first; paginated (limit, cursor). Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.delete("withdrawInput", `${AGENT}/backlog/:inputID`, {
      params: Schema.Struct({ ...AgentPath.fields, inputID: InputId }),
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, StateTransitionConflict.Wire]
    })
      .annotate(OpenApi.Summary, "Withdraw a queued input")
      .annotate(
        OpenApi.Description,
        "Removes a queued input from the backlog; its turn never runs. Needs project write access."
      )
  )
  .add(
    HttpApiEndpoint.post("control", `${AGENT}/control`, {
      params: AgentPath,
      payload: Control,
      success: ControlEvent,
      error: [NotFound.Wire, Forbidden.Wire, StateTransitionConflict.Wire]
    })
      .annotate(OpenApi.Summary, "Cancel the agent's current turn")
      .annotate(
        OpenApi.Description,
        "`cancel_current` stops the current turn and records a control event; the next queued input then runs. " +
          "With no turn running, or when `turn_id` names a turn that is not the current one: " +
          "state_transition_conflict. Needs project write access."
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", `${AGENT}/events`, {
      params: AgentPath,
      query: EventsQuery,
      success: EventsPage,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the agent's events")
      .annotate(
        OpenApi.Description,
        `One page of the timeline, chronological within the page. limit: 1 to 500, default ${DEFAULT_EVENTS_LIMIT}. ` +
          "Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.post("mintStreamToken", `${AGENT}/events/stream-token`, {
      params: AgentPath,
      success: StreamToken,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Mint a token for the agent's event stream")
      .annotate(
        OpenApi.Description,
        "A short-lived token (5 minutes) for this agent's event stream, sent as `?stream_token=` where a client " +
          "cannot send an Authorization header (a browser's EventSource). It acts as the calling API key: deleting " +
          "that key invalidates it. Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.get("listTurns", `${AGENT}/turns`, {
      params: AgentPath,
      query: ListQuery,
      success: Page(Turn),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the agent's turns")
      .annotate(OpenApi.Description, "Oldest first; paginated (limit, cursor). Needs project read access.")
  )
  .add(
    HttpApiEndpoint.get("getTurn", `${AGENT}/turns/:turnID`, {
      params: Schema.Struct({ ...AgentPath.fields, turnID: TurnId }),
      success: Turn,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a turn")
      .annotate(
        OpenApi.Description,
        "Status, error, model call count, token usage and timing. Needs project read access. A queued " +
          "input's turn_id is 404 until its turn starts: until then the input is in the backlog."
      )
  )
  .add(
    HttpApiEndpoint.get("getArtifact", `${AGENT}/artifacts/:artifactID`, {
      params: Schema.Struct({ ...AgentPath.fields, artifactID: ArtifactId }),
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array()).annotate({
        description: "The bytes, served with the media type they were sent with"
      }),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Download an artifact")
      .annotate(
        OpenApi.Description,
        "The bytes of an inline media block that an input or tool result sent (a media_ref's artifact_id), " +
          "with the media type they were sent with, `x-content-type-options: nosniff` and a sandboxing " +
          "content-security-policy. Needs project read access."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Agents: launch, inputs and backlog, control, timeline, turns and artifacts")
{}
