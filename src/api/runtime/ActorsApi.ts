import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { Actor, CreateActor } from "../../domain/runtime/Actors.ts"
import { ProjectPath } from "../tenancy/ProjectsApi.ts"
import { Authentication } from "../Security.ts"

export class ActorsApi extends HttpApiGroup.make("actors")
  .annotate(OpenApi.Title, "Actors")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects/:projectID/actors")
      .annotate(OpenApi.Summary, "Create an actor")
      .setPath(ProjectPath)
      .setPayload(CreateActor)
      .addSuccess(Actor.annotations({ description: "a new actor" }), { status: 201 })
      .addSuccess(Actor.annotations({ description: "the actor this external_id already has (unchanged)" }))
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/actors")
      .annotate(OpenApi.Summary, "List the project's actors")
      .setPath(ProjectPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Actor))
      .addError(NotFound.Wire)
      .annotate(OpenApi.Description, "Oldest first")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The external users a project attributes agent inputs to")
{}
