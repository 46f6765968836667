import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Workspaces } from "../../../services/workspaces/Workspaces.ts"
import { WorkspaceSessions } from "../../../services/workspaces/WorkspaceSessions.ts"
import { WorktreeMigrations } from "../../../services/workspaces/WorktreeMigrations.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const WorkspacesLive = HttpApiBuilder.group(Api, "workspaces", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const sessions = yield* WorkspaceSessions
    const migrations = yield* WorktreeMigrations
    return handlers
      .handle("create", ({ payload }) => workspaces.create(payload))
      .handle("list", () => workspaces.list)
      .handle("get", ({ path }) => workspaces.get(path.workspace_id))
      .handle("update", ({ path, payload }) => workspaces.update(path.workspace_id, payload))
      .handle("remove", ({ path }) => workspaces.remove(path.workspace_id))
      .handle("launchSession", ({ path, payload }) => sessions.launch(path.workspace_id, payload))
      .handle("listWorktrees", ({ path }) => workspaces.listWorktrees(path.workspace_id))
      .handle("migrate", ({ path, payload }) => migrations.migrate(path.worktree_id, payload))
  }))
  .pipe(builtWithOnly(Workspaces, WorkspaceSessions, WorktreeMigrations, Authentication))
