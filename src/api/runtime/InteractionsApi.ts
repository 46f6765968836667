import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Forbidden, NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import { InteractionId } from "../../domain/shared/Ids.ts"
import { optional } from "../../domain/shared/Optional.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { Interaction, InteractionStatus, ResolveInteraction } from "../../domain/runtime/Interactions.ts"
import { AgentPath } from "./AgentsApi.ts"
import { ProjectPath } from "../tenancy/ProjectsApi.ts"
import { Authentication } from "../Security.ts"

export class InteractionsApi extends HttpApiGroup.make("interactions")
  .annotate(OpenApi.Title, "Interactions")
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/interactions", {
      params: ProjectPath,
      query: Schema.Struct({ ...ListQuery.fields, status: optional(InteractionStatus) }),
      success: Page(Interaction),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the project's interactions")
      .annotate(
        OpenApi.Description,
        "The approvals and questions of every agent of the project, oldest first; paginated (limit, cursor); " +
          "`status` keeps those in that status. Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.get("listForAgent", "/orgs/:orgID/projects/:projectID/agents/:agentID/interactions", {
      params: AgentPath,
      query: ListQuery,
      success: Page(Interaction),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the agent's interactions")
      .annotate(
        OpenApi.Description,
        "The agent's approvals and questions, oldest first; paginated (limit, cursor). Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.post("resolve", "/orgs/:orgID/projects/:projectID/interactions/:interactionID/resolve", {
      params: Schema.Struct({ ...ProjectPath.fields, interactionID: InteractionId }),
      payload: ResolveInteraction,
      success: Interaction,
      error: [NotFound.Wire, Forbidden.Wire, StateTransitionConflict.Wire]
    })
      .annotate(OpenApi.Summary, "Resolve an interaction")
      .annotate(
        OpenApi.Description,
        "Approves or denies a pending approval (with an optional message), or answers a question (approve with " +
          "`answer`) or declines it (deny); `answer` anywhere else is invalid_request. Resolving twice: " +
          "state_transition_conflict. Needs project write access; 403 when the agent's config uses another member's " +
          "personal secrets or machine."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Approvals and questions that pause agents")
{}
