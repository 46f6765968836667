import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Skills } from "../../../services/configuration/Skills.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const SkillsLive = HttpApiBuilder.group(Api, "skills", (handlers) =>
  Effect.map(Skills, (skills) =>
    handlers
      .handle("create", ({ path, payload }) => skills.create(path.orgID, payload))
      .handle("list", ({ path, urlParams }) => skills.list(path.orgID, urlParams))
      .handle("get", ({ path }) => skills.get(path.orgID, path.skillID))
      .handle("remove", ({ path }) => skills.remove(path.orgID, path.skillID))
      .handle("createVersion", ({ path, payload }) => skills.createVersion(path.orgID, path.skillID, payload.content))
      .handle("listVersions", ({ path, urlParams }) => skills.listVersions(path.orgID, path.skillID, urlParams))
      .handle("getVersion", ({ path }) => skills.getVersion(path.orgID, path.skillID, path.version))
      .handle("createGrant", ({ path, payload }) => skills.createGrant(path.orgID, path.skillID, payload))
      .handle("listGrants", ({ path, urlParams }) => skills.listGrants(path.orgID, path.skillID, urlParams))
      .handle("removeGrant", ({ path }) => skills.removeGrant(path.orgID, path.skillID, path.grantID))))
  .pipe(builtWithOnly(Skills, Authentication))
