import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Workspaces } from "../../../services/workspaces/Workspaces.ts"
import { WorkspaceSessions } from "../../../services/workspaces/WorkspaceSessions.ts"
import { WorktreeMigrations } from "../../../services/workspaces/WorktreeMigrations.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { BearerAuthentication } from "../../Security.ts"

export const WorkspacesLive = HttpApiBuilder.group(Api, "workspaces", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const sessions = yield* WorkspaceSessions
    const migrations = yield* WorktreeMigrations
    return handlers
      .handle("create", ({ payload }) => workspaces.create(payload))
      .handle("list", () => workspaces.list)
      .handle("get", ({ params }) => workspaces.get(params.workspace_id))
      .handle("update", ({ params, payload }) => workspaces.update(params.workspace_id, payload))
      .handle("remove", ({ params }) => workspaces.remove(params.workspace_id))
      .handle("launchSession", ({ params, payload }) => sessions.launch(params.workspace_id, payload))
      .handle("listWorktrees", ({ params }) => workspaces.listWorktrees(params.workspace_id))
      .handle("migrate", ({ params, payload }) => migrations.migrate(params.worktree_id, payload))
  }))
  .pipe(builtWithOnly(Workspaces, WorkspaceSessions, WorktreeMigrations, BearerAuthentication, ApiErrors))
