import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { ProjectMembers } from "../../../services/tenancy/ProjectMembers.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ProjectMembersLive = HttpApiBuilder.group(Api, "projectMembers", (handlers) =>
  Effect.map(ProjectMembers, (projectMembers) =>
    handlers
      .handle("list", ({ path, urlParams }) => projectMembers.list(path.orgID, path.projectID, urlParams))
      .handle("add", ({ path, payload }) =>
        projectMembers.add(path.orgID, path.projectID, payload.user_id, payload.role ?? "member"))
      .handle("remove", ({ path }) => projectMembers.remove(path.orgID, path.projectID, path.userID))))
  .pipe(builtWithOnly(ProjectMembers, Authentication))
