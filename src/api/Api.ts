/**
 * The whole HTTP API, safe to import from a client. Served under `/v1`; the server also answers
 * the same routes under `/api/v1` (src/layers/http/RequestGuards.ts).
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { InternalError, InvalidRequest, NotFound, RequestTooLarge, UnsupportedMediaType } from "../domain/Errors.ts"
import { ActorsApi } from "./ActorsApi.ts"
import { AgentConfigsApi } from "./AgentConfigsApi.ts"
import { AgentsApi } from "./AgentsApi.ts"
import { HealthApi } from "./HealthApi.ts"
import { InteractionsApi } from "./InteractionsApi.ts"
import { InvitationsApi } from "./InvitationsApi.ts"
import { MembersApi } from "./MembersApi.ts"
import { ModelProviderConfigsApi } from "./ModelProviderConfigsApi.ts"
import { ModelsApi } from "./ModelsApi.ts"
import { OrganizationApiKeysApi } from "./OrganizationApiKeysApi.ts"
import { OrganizationsApi } from "./OrganizationsApi.ts"
import { ProjectMembersApi } from "./ProjectMembersApi.ts"
import { ProjectsApi } from "./ProjectsApi.ts"
import { SecretsApi } from "./SecretsApi.ts"
import { SkillsApi } from "./SkillsApi.ts"
import { ToolCallsApi } from "./ToolCallsApi.ts"
import { UserApi } from "./UserApi.ts"

export const API_VERSION = "0.1.0"

export class Api extends HttpApi.make("agent-platform")
  .add(UserApi)
  .add(OrganizationsApi)
  .add(OrganizationApiKeysApi)
  .add(MembersApi)
  .add(InvitationsApi)
  .add(ProjectsApi)
  .add(ProjectMembersApi)
  .add(SkillsApi)
  .add(SecretsApi)
  .add(ModelProviderConfigsApi)
  .add(ModelsApi)
  .add(AgentConfigsApi)
  .add(AgentsApi)
  .add(ToolCallsApi)
  .add(InteractionsApi)
  .add(ActorsApi)
  .prefix("/v1")
  .add(HealthApi)
  .addError(InvalidRequest.Wire)
  .addError(NotFound.Wire)
  .addError(RequestTooLarge.Wire)
  .addError(UnsupportedMediaType.Wire)
  .addError(InternalError.Wire)
  .annotate(OpenApi.Title, "Agent Platform API")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(
    OpenApi.Description,
    "Organizations, projects, members and API keys of a self-hosted agent platform. " +
      "Every route is also served under /api/v1."
  )
{}
