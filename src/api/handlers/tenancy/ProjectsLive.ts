import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Projects } from "../../../services/tenancy/Projects.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ProjectsLive = HttpApiBuilder.group(Api, "projects", (handlers) =>
  Effect.map(Projects, (projects) =>
    handlers
      .handle("create", ({ path, payload }) => projects.create(path.orgID, payload.name))
      .handle("list", ({ path, urlParams }) => projects.list(path.orgID, urlParams))
      .handle("get", ({ path }) => projects.get(path.orgID, path.projectID))
      .handle("update", ({ path, payload }) => projects.rename(path.orgID, path.projectID, payload.name))
      .handle("remove", ({ path }) => projects.remove(path.orgID, path.projectID))))
  .pipe(builtWithOnly(Projects, Authentication))
