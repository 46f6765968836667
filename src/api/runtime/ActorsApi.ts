import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { Actor, CreateActor } from "../../domain/runtime/Actors.ts"
import { ProjectPath } from "../tenancy/ProjectsApi.ts"
import { Authentication } from "../Security.ts"

export class ActorsApi extends HttpApiGroup.make("actors")
  .annotate(OpenApi.Title, "Actors")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects/:projectID/actors", {
      params: ProjectPath,
      payload: CreateActor,
      success: [
        Actor.annotate({ description: "a new actor" }).pipe(HttpApiSchema.status(201)),
        Actor.annotate({ description: "the actor this external_id already has (unchanged)" })
      ],
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Create an actor")
      .annotate(
        OpenApi.Description,
        "Answers 201 with a new actor, or 200 with the actor the project already has for that external_id, " +
          "unchanged (its display_name is not updated): one call ensures the actor of one of your users. " +
          "Needs project write access."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/actors", {
      params: ProjectPath,
      query: ListQuery,
      success: Page(Actor),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the project's actors")
      .annotate(OpenApi.Description, "Oldest first; paginated (limit, cursor). Needs project read access.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The external users a project attributes agent inputs to")
{}
