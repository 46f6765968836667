import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Forbidden, InvalidRequest, NotFound, RequestTooLarge, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import { ToolCallId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { SubmitToolResult, ToolCall, ToolResultAccepted } from "../../domain/runtime/ToolCalls.ts"
import { AgentPath } from "./AgentsApi.ts"
import { Authentication } from "../Security.ts"

export const ToolCallPath = Schema.Struct({ ...AgentPath.fields, toolCallID: ToolCallId })

const TOOL_CALLS = "/orgs/:orgID/projects/:projectID/agents/:agentID/tool-calls"

export class ToolCallsApi extends HttpApiGroup.make("toolCalls")
  .annotate(OpenApi.Title, "Tool calls")
  .add(
    HttpApiEndpoint.get("list", TOOL_CALLS, {
      params: AgentPath,
      query: ListQuery,
      success: Page(ToolCall),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the agent's tool calls")
      .annotate(
        OpenApi.Description,
        "The agent's tool calls, oldest first; paginated (limit, cursor). Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.get("get", `${TOOL_CALLS}/:toolCallID`, {
      params: ToolCallPath,
      success: ToolCall,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a tool call")
      .annotate(OpenApi.Description, "Needs project read access (any member of the organization has it).")
  )
  .add(
    HttpApiEndpoint.post("submitResult", `${TOOL_CALLS}/:toolCallID/result`, {
      params: ToolCallPath,
      payload: SubmitToolResult,
      success: ToolResultAccepted.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest.Wire, RequestTooLarge.Wire, NotFound.Wire, Forbidden.Wire, StateTransitionConflict.Wire]
    })
      .annotate(OpenApi.Summary, "Submit a custom tool call's result")
      .annotate(
        OpenApi.Description,
        "Submits the result of a ready custom tool call: the first accepted result completes it; a later " +
          "one, or one for a built-in call, is 409. Limits: at most 20 inline media blocks (invalid_request), " +
          "each at most 10 MiB decoded, 24 MiB of media, 1 MiB of other blocks, 48 MiB body (request_too_large). " +
          "Needs project write access; 403 when the agent's config uses another member's personal secrets or machine."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Tool calls of agents and the results of custom tools")
{}
