/**
 * `POST /api/v1/machines/register` (also under /v1): a daemon registers its machine with a daemon
 * token (an organization machine) or a personal API key (the user's machine). Its own security
 * middleware, since an organization API key does not register machines and a daemon token is
 * good for nothing else.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CurrentRegistrant } from "../../domain/machines/Registrant.ts"
import { RegisterMachineRequest, RegisterMachineResponse } from "../../domain/machines/Registration.ts"
import { AuthenticationUnavailable, Conflict, Forbidden, NotFound, Unauthorized } from "../../domain/shared/Errors.ts"
import { strict } from "../../domain/shared/Strict.ts"

export class RegistrationAuthentication extends HttpApiMiddleware.Tag<RegistrationAuthentication>()("RegistrationAuthentication", {
  failure: Schema.Union(Unauthorized.Wire, Forbidden.Wire, AuthenticationUnavailable.Wire),
  provides: CurrentRegistrant,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "A daemon token of an organization, or a personal API key")
    )
  }
}) {}

export class MachineRegistrationApi extends HttpApiGroup.make("machineRegistration")
  .annotate(OpenApi.Title, "Machine registration")
  .add(
    HttpApiEndpoint.post("register", "/machines/register")
      .annotate(OpenApi.Summary, "Register a machine (daemons)")
      .setPayload(RegisterMachineRequest.annotations(strict))
      .addSuccess(RegisterMachineResponse)
      .addError(NotFound.Wire)
      .addError(Conflict.Wire)
  )
  .middleware(RegistrationAuthentication)
  .annotate(
    OpenApi.Description,
    "Machine registration, for daemons: answers the machine and a short-lived token for its WebSocket"
  )
{}
