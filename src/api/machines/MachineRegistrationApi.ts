/**
 * `POST /api/v1/machines/register` (also under /v1): a daemon registers its machine with a daemon
 * token (an organization machine) or a personal API key (the user's machine). Its own security
 * middleware, since an organization API key does not register machines and a daemon token is
 * good for nothing else.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "effect/http-api"
import { CurrentRegistrant } from "../../domain/machines/Registrant.ts"
import { RegisterMachineRequest, RegisterMachineResponse } from "../../domain/machines/Registration.ts"
import { AuthenticationUnavailable, Conflict, Forbidden, NotFound, RateLimited, Unauthorized } from "../../domain/shared/Errors.ts"
import { bearer } from "../Security.ts"

export class RegistrationAuthentication
  extends HttpApiMiddleware.Service<RegistrationAuthentication, { provides: CurrentRegistrant }>()(
    "RegistrationAuthentication",
    {
      error: [Unauthorized.Wire, Forbidden.Wire, RateLimited.Wire, AuthenticationUnavailable.Wire],
      // A daemon token of an organization, or a personal API key. The scheme is the Api's one
      // `bearer` (Security.ts): Effect 4 refuses a second, differently described scheme of that
      // name (Effect 3 published the first one only).
      security: { bearer }
    }
  )
{}

export class MachineRegistrationApi extends HttpApiGroup.make("machineRegistration")
  .annotate(OpenApi.Title, "Machine registration")
  .add(
    HttpApiEndpoint.post("register", "/machines/register", {
      payload: RegisterMachineRequest,
      success: RegisterMachineResponse,
      error: [NotFound.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Register a machine (daemons)")
      .annotate(
        OpenApi.Description,
        "With a daemon token, an organization machine; with a personal API key, your own machine (an " +
          "organization API key is 403). The machine_id of a machine the same owner has updates that " +
          "machine, else a new one is registered; answers 200 with the machine and a machine token for its " +
          "WebSocket, good for 900 s. 404 when metadata.org_id names an organization the credential does not " +
          "register into; 409 when the owner has another machine of that name."
      )
  )
  .middleware(RegistrationAuthentication)
  .annotate(
    OpenApi.Description,
    "Machine registration, for daemons: answers the machine and a short-lived token for its WebSocket"
  )
{}
