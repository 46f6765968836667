import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Skills } from "../../../services/configuration/Skills.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const SkillsLive = HttpApiBuilder.group(Api, "skills", (handlers) =>
  Effect.map(Effect.service(Skills), (skills) =>
    handlers
      .handle("create", ({ params, payload }) => skills.create(params.orgID, payload))
      .handle("list", ({ params, query }) => skills.list(params.orgID, query))
      .handle("get", ({ params }) => skills.get(params.orgID, params.skillID))
      .handle("remove", ({ params }) => skills.remove(params.orgID, params.skillID))
      .handle("createVersion", ({ params, payload }) => skills.createVersion(params.orgID, params.skillID, payload.content))
      .handle("listVersions", ({ params, query }) => skills.listVersions(params.orgID, params.skillID, query))
      .handle("getVersion", ({ params }) => skills.getVersion(params.orgID, params.skillID, params.version))
      .handle("createGrant", ({ params, payload }) => skills.createGrant(params.orgID, params.skillID, payload))
      .handle("listGrants", ({ params, query }) => skills.listGrants(params.orgID, params.skillID, query))
      .handle("removeGrant", ({ params }) => skills.removeGrant(params.orgID, params.skillID, params.grantID))))
  .pipe(builtWithOnly(Skills, Authentication, ApiErrors))
