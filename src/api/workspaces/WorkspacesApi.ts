import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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
import { Authentication } from "../Security.ts"

const WorkspacePath = Schema.Struct({ workspace_id: WorkspaceId })
const WorktreePath = Schema.Struct({ worktree_id: WorktreeId })

export class WorkspacesApi extends HttpApiGroup.make("workspaces")
  .annotate(OpenApi.Title, "Workspaces")
  .add(
    HttpApiEndpoint.post("create", "/workspaces")
      .annotate(OpenApi.Summary, "Create a workspace (and its main worktree)")
      .setPayload(CreateWorkspace)
      .addSuccess(Workspace, { status: 201 })
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/workspaces")
      .annotate(OpenApi.Summary, "List your workspaces")
      .addSuccess(Schema.Array(Workspace))
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/workspaces/:workspace_id")
      .annotate(OpenApi.Summary, "Get a workspace")
      .setPath(WorkspacePath)
      .addSuccess(Workspace)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/workspaces/:workspace_id")
      .annotate(OpenApi.Summary, "Change a workspace")
      .setPath(WorkspacePath)
      .setPayload(UpdateWorkspace)
      .addSuccess(Workspace)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/workspaces/:workspace_id")
      .annotate(OpenApi.Summary, "Delete a workspace (its worktrees, sessions and checkpoints; the agents stay)")
      .setPath(WorkspacePath)
      .addSuccess(Schema.Void)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.post("launchSession", "/workspaces/:workspace_id/sessions")
      .annotate(OpenApi.Summary, "Start a session: an agent of the project on a worktree of a machine")
      .setPath(WorkspacePath)
      .setPayload(LaunchSession)
      .addSuccess(LaunchedSession, { status: 201 })
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
      .addError(StateTransitionConflict.Wire)
      .addError(AgentBacklogFull.Wire)
      .addError(SessionMachineOffline.Wire)
      .addError(SessionRefused.Wire)
      .addError(SessionMachineTimeout.Wire)
  )
  .add(
    HttpApiEndpoint.get("listWorktrees", "/worktrees/workspace/:workspace_id")
      .annotate(OpenApi.Summary, "List a workspace's worktrees")
      .setPath(WorkspacePath)
      .addSuccess(Schema.Array(WorktreeDescriptor))
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.post("migrate", "/worktrees/:worktree_id/migrate")
      .annotate(OpenApi.Summary, "Move a worktree to a machine of yours (LOCAL) or to a pool sandbox (REMOTE)")
      .setPath(WorktreePath)
      .setPayload(MigrateWorktree)
      .addSuccess(MigratedWorktree)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
      .addError(StateTransitionConflict.Wire)
      .addError(DaemonRuntimeUnregistered.Wire)
      .addError(Unprocessable.Wire)
      .addError(ServiceUnavailable.Wire)
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "A person's workspaces on a repository (personal API keys only; another user's workspace is not found), " +
      "their worktrees, sessions and worktree migration. Served under /api/v1."
  )
{}
