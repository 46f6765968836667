/**
 * The grant endpoints of a grantable resource (secrets, models, skills; next machines and pools),
 * added to the resource's group: `createGrant`, `listGrants` and `removeGrant` under
 * `<route>/grants`. The path schemas are checked where they are written (the caller), so the
 * builder stays generic over them.
 */
import { HttpApiEndpoint, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CreateGrant } from "../../domain/configuration/Grants.ts"
import { Conflict, Forbidden, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"

/** A path schema HttpApi accepts: one that encodes to strings. */
type PathSchema<S extends Schema.Schema.Any> = S & HttpApiEndpoint.HttpApiEndpoint.ValidatePath<S>

export const grantEndpoints = <
  ResourcePath extends Schema.Schema.Any,
  GrantPath extends Schema.Schema.Any,
  Grant,
  GrantEncoded
>(options: {
  /** The resource's own route, e.g. `/orgs/:orgID/secrets/:secretID`. */
  readonly route: HttpApiEndpoint.PathSegment
  /** The resource's path parameters. */
  readonly resourcePath: PathSchema<ResourcePath>
  /** The resource's path parameters and `grantID`. */
  readonly grantPath: PathSchema<GrantPath>
  readonly grant: Schema.Schema<Grant, GrantEncoded>
  /** The resource in the operations' summaries, e.g. `secret`. */
  readonly noun: string
}) => {
  const grants: HttpApiEndpoint.PathSegment = `${options.route}/grants`
  return {
    createGrant: HttpApiEndpoint.post("createGrant", grants)
      .annotate(OpenApi.Summary, `Grant a ${options.noun} to a project`)
      .setPath(options.resourcePath)
      .setPayload(CreateGrant)
      .addSuccess(options.grant, { status: 201 })
      .addError(InvalidRequest.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire),
    listGrants: HttpApiEndpoint.get("listGrants", grants)
      .annotate(OpenApi.Summary, `List the ${options.noun}'s grants`)
      .setPath(options.resourcePath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(options.grant))
      .addError(NotFound.Wire),
    removeGrant: HttpApiEndpoint.del("removeGrant", `${grants}/:grantID`)
      .annotate(OpenApi.Summary, `Revoke a ${options.noun} grant`)
      .setPath(options.grantPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  }
}
