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
  /** The resource in the operations' summaries and descriptions, e.g. `secret`. */
  readonly noun: string
  /**
   * Who may grant and revoke, a sentence of the descriptions, e.g. "Needs the admin or owner role in
   * the organization (a member is 403)."
   */
  readonly whoManages: string
  /** Who may list the grants, a sentence of the description. */
  readonly whoReads: string
  /** What else granting refuses, a sentence of the description, e.g. "A personal secret is not granted (400)." */
  readonly refusals?: string
}) => {
  const grants = `${options.route}/grants` as const
  return {
    createGrant: HttpApiEndpoint.post("createGrant", grants, {
      params: options.resourcePath,
      payload: CreateGrant,
      success: options.grant.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest.Wire, NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, `Grant a ${options.noun} to a project`)
      .annotate(
        OpenApi.Description,
        `Lets a project of the organization use the ${options.noun}; answers 201 with the grant. ` +
          `${options.whoManages} 400 invalid_request when target_project_id is not a project of the ` +
          `organization; 409 when the ${options.noun} is granted to that project already.` +
          (options.refusals === undefined ? "" : ` ${options.refusals}`)
      ),
    listGrants: HttpApiEndpoint.get("listGrants", grants, {
      params: options.resourcePath,
      query: ListQuery,
      success: Page(options.grant),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, `List the ${options.noun}'s grants`)
      .annotate(OpenApi.Description, `Oldest first; paginated (limit, cursor). ${options.whoReads}`),
    removeGrant: HttpApiEndpoint.delete("removeGrant", `${grants}/:grantID` as const, {
      params: options.grantPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, `Revoke a ${options.noun} grant`)
      .annotate(OpenApi.Description, `Deletes the grant. ${options.whoManages} 404 for an unknown grant.`)
  }
}
