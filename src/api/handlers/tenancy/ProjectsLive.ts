import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Projects } from "../../../services/tenancy/Projects.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ProjectsLive = HttpApiBuilder.group(Api, "projects", (handlers) =>
  Effect.map(Effect.service(Projects), (projects) =>
    handlers
      .handle("create", ({ params, payload }) => projects.create(params.orgID, payload.name))
      .handle("list", ({ params, query }) => projects.list(params.orgID, query))
      .handle("get", ({ params }) => projects.get(params.orgID, params.projectID))
      .handle("update", ({ params, payload }) => projects.rename(params.orgID, params.projectID, payload.name))
      .handle("remove", ({ params }) => projects.remove(params.orgID, params.projectID))))
  .pipe(builtWithOnly(Projects, Authentication, ApiErrors))
