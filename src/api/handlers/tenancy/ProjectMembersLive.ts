import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { ProjectMembers } from "../../../services/tenancy/ProjectMembers.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ProjectMembersLive = HttpApiBuilder.group(Api, "projectMembers", (handlers) =>
  Effect.map(Effect.service(ProjectMembers), (projectMembers) =>
    handlers
      .handle("list", ({ params, query }) => projectMembers.list(params.orgID, params.projectID, query))
      .handle("add", ({ params, payload }) =>
        projectMembers.add(params.orgID, params.projectID, payload.user_id, payload.role ?? "member"))
      .handle("remove", ({ params }) => projectMembers.remove(params.orgID, params.projectID, params.userID))))
  .pipe(builtWithOnly(ProjectMembers, Authentication, ApiErrors))
