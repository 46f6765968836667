import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import {
  AgentBacklogFull,
  Conflict,
  DaemonRuntimeUnregistered,
  Forbidden,
  ServiceUnavailable,
  StateTransitionConflict,
  Unprocessable
} from "../../domain/shared/Errors.ts"
import { WorkspaceId, WorktreeId } from "../../domain/shared/Ids.ts"
import {
  CreateWorkspace,
  LaunchedSession,
  LaunchSession,
  MigratedWorktree,
  MigrateWorktree,
  SessionMachineOffline,
  SessionMachineTimeout,
  SessionRefused,
  UpdateWorkspace,
  Workspace,
  WorktreeDescriptor
} from "../../domain/workspaces/Workspaces.ts"
import { BearerAuthentication } from "../Security.ts"

const WorkspacePath = Schema.Struct({ workspace_id: WorkspaceId })
const WorktreePath = Schema.Struct({ worktree_id: WorktreeId })

export class WorkspacesApi extends HttpApiGroup.make("workspaces")
  .annotate(OpenApi.Title, "Workspaces")
  .add(
    HttpApiEndpoint.post("create", "/workspaces", {
      payload: CreateWorkspace,
      success: Workspace.pipe(HttpApiSchema.status(201)),
      error: [Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create a workspace (and its main worktree)")
  )
  .add(
    HttpApiEndpoint.get("list", "/workspaces", {
      success: Schema.Array(Workspace),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "List your workspaces")
  )
  .add(
    HttpApiEndpoint.get("get", "/workspaces/:workspace_id", {
      params: WorkspacePath,
      success: Workspace,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Get a workspace")
  )
  .add(
    HttpApiEndpoint.patch("update", "/workspaces/:workspace_id", {
      params: WorkspacePath,
      payload: UpdateWorkspace,
      success: Workspace,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Change a workspace")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/workspaces/:workspace_id", {
      params: WorkspacePath,
      success: HttpApiSchema.NoContent,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Delete a workspace (its worktrees, sessions and checkpoints; the agents stay)")
  )
  .add(
    HttpApiEndpoint.post("launchSession", "/workspaces/:workspace_id/sessions", {
      params: WorkspacePath,
      payload: LaunchSession,
      success: LaunchedSession.pipe(HttpApiSchema.status(201)),
      error: [
        Forbidden.Wire,
        Conflict.Wire,
        StateTransitionConflict.Wire,
        AgentBacklogFull.Wire,
        SessionMachineOffline.Wire,
        SessionRefused.Wire,
        SessionMachineTimeout.Wire
      ]
    })
      .annotate(OpenApi.Summary, "Start a session: an agent of the project on a worktree of a machine")
  )
  .add(
    HttpApiEndpoint.get("listWorktrees", "/worktrees/workspace/:workspace_id", {
      params: WorkspacePath,
      success: Schema.Array(WorktreeDescriptor),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "List a workspace's worktrees")
  )
  .add(
    HttpApiEndpoint.post("migrate", "/worktrees/:worktree_id/migrate", {
      params: WorktreePath,
      payload: MigrateWorktree,
      success: MigratedWorktree,
      error: [
        Forbidden.Wire,
        Conflict.Wire,
        StateTransitionConflict.Wire,
        DaemonRuntimeUnregistered.Wire,
        Unprocessable.Wire,
        ServiceUnavailable.Wire
      ]
    })
      .annotate(OpenApi.Summary, "Move a worktree to a machine of yours (LOCAL) or to a pool sandbox (REMOTE)")
  )
  .middleware(BearerAuthentication)
  .annotate(
    OpenApi.Description,
    "A person's workspaces on a repository (personal API keys only; another user's workspace is not found), " +
      "their worktrees, sessions and worktree migration. Served under /api/v1."
  )
{}
