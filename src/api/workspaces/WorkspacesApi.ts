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
      .annotate(
        OpenApi.Description,
        "Answers 201. Needs project write access in the workspace's project; not for organization API keys " +
          "(403). 400 when default_machine_id or machine_pool_id is not one you may use there; 409 when you " +
          "have 1,000 workspaces already: delete one first."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/workspaces", {
      success: Schema.Array(Workspace),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "List your workspaces")
      .annotate(
        OpenApi.Description,
        "Your workspaces in the projects you still have access to, oldest first, as an array (not " +
          "paginated: at most 1,000 a person). Not for organization API keys (403)."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/workspaces/:workspace_id", {
      params: WorkspacePath,
      success: Workspace,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Get a workspace")
      .annotate(
        OpenApi.Description,
        "Needs project read access in the workspace's project; not for organization API keys (403). " +
          "Another user's workspace is 404, even for an owner of the organization."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/workspaces/:workspace_id", {
      params: WorkspacePath,
      payload: UpdateWorkspace,
      success: Workspace,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Change a workspace")
      .annotate(
        OpenApi.Description,
        "Changes the fields given: repository merges key by key, null clears url, base_ref, " +
          "default_machine_id or machine_pool_id. Needs project write access in the workspace's project; not " +
          "for organization API keys (403). Another user's workspace is 404."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/workspaces/:workspace_id", {
      params: WorkspacePath,
      success: HttpApiSchema.NoContent,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Delete a workspace (its worktrees, sessions and checkpoints; the agents stay)")
      .annotate(
        OpenApi.Description,
        "Its REMOTE worktrees' sandboxes are deleted with it; clones and worktrees on your machines stay. " +
          "Needs project write access in the workspace's project; not for organization API keys (403). " +
          "Another user's workspace is 404."
      )
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
      .annotate(
        OpenApi.Description,
        "Places the worktree on the machine (made, reused or restored) and starts an agent of the project " +
          "there: 201 {status: ok, payload}. What fails on the machine answers {status: error}: 409 " +
          "daemon_runtime_unregistered (no daemon connected), 422 unprocessable (git failed), 503 (no answer " +
          "within 120 s). 409 conflict when the worktree is on another machine, state_transition_conflict " +
          "while it is being migrated. Needs project write access in the workspace's project; not for " +
          "organization API keys (403)."
      )
  )
  .add(
    HttpApiEndpoint.get("listWorktrees", "/worktrees/workspace/:workspace_id", {
      params: WorkspacePath,
      success: Schema.Array(WorktreeDescriptor),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "List a workspace's worktrees")
      .annotate(
        OpenApi.Description,
        "The main worktree first, as an array. Needs project read access in the workspace's project; not " +
          "for organization API keys (403). Another user's workspace is 404."
      )
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
      .annotate(
        OpenApi.Description,
        "Moves it through a checkpoint and answers 200 {worktree, status: migrated}. Needs project write " +
          "access; another user's worktree is 404. 409 state_transition_conflict while another migration " +
          "runs or an agent of the worktree's sessions is in a turn, daemon_runtime_unregistered when a " +
          "machine it needs is offline; 422 when git fails on the machine."
      )
  )
  .middleware(BearerAuthentication)
  .annotate(
    OpenApi.Description,
    "A person's workspaces on a repository (personal API keys only; another user's workspace is not found), " +
      "their worktrees, sessions and worktree migration. Served under /api/v1."
  )
{}
