/**
 * The grant endpoints of a grantable resource (secrets, models, skills; next machines and pools),
 * added to the resource's group: `createGrant`, `listGrants` and `removeGrant` under
 * `<route>/grants`. The path schemas are checked where they are written (the caller), so the
 * builder stays generic over them.
 */
import { HttpApiEndpoint, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { CreateGrant } from "../../domain/configuration/Grants.ts"
import { Conflict, Forbidden, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"

export const grantEndpoints = <
  const Route extends `/${string}`,
  ResourcePath extends Schema.Top,
  GrantPath extends Schema.Top,
  Grant extends Schema.Top
>(options: {
  /** The resource's own route, e.g. `/orgs/:orgID/secrets/:secretID`. */
  readonly route: Route
  /** The resource's path parameters. */
  readonly resourcePath: ResourcePath
  /** The resource's path parameters and `grantID`. */
  readonly grantPath: GrantPath
  readonly grant: Grant
  /** The resource in the operations' summaries, e.g. `secret`. */
  readonly noun: string
}) => {
  const grants = `${options.route}/grants` as const
  return {
    createGrant: HttpApiEndpoint.post("createGrant", grants, {
      params: options.resourcePath,
      payload: CreateGrant,
      success: options.grant.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest.Wire, NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, `Grant a ${options.noun} to a project`),
    listGrants: HttpApiEndpoint.get("listGrants", grants, {
      params: options.resourcePath,
      query: ListQuery,
      success: Page(options.grant),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, `List the ${options.noun}'s grants`),
    removeGrant: HttpApiEndpoint.delete("removeGrant", `${grants}/:grantID` as const, {
      params: options.grantPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, `Revoke a ${options.noun} grant`)
  }
}
