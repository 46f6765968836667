/**
 * The whole HTTP API, safe to import from a client. Served under `/v1`; the server also answers
 * the same routes under `/api/v1` (src/layers/http/RequestGuards.ts).
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { InternalError, InvalidRequest, NotFound, RequestTooLarge, UnsupportedMediaType } from "../domain/shared/Errors.ts"
import { ActorsApi } from "./runtime/ActorsApi.ts"
import { AgentConfigsApi } from "./configuration/AgentConfigsApi.ts"
import { AgentsApi } from "./runtime/AgentsApi.ts"
import { HealthApi } from "./HealthApi.ts"
import { MachineRegistrationApi } from "./machines/MachineRegistrationApi.ts"
import { MachinesApi } from "./machines/MachinesApi.ts"
import { InteractionsApi } from "./runtime/InteractionsApi.ts"
import { InvitationsApi } from "./tenancy/InvitationsApi.ts"
import { MembersApi } from "./tenancy/MembersApi.ts"
import { ModelProviderConfigsApi } from "./configuration/ModelProviderConfigsApi.ts"
import { ModelsApi } from "./configuration/ModelsApi.ts"
import { OrganizationApiKeysApi } from "./tenancy/OrganizationApiKeysApi.ts"
import { OrganizationsApi } from "./tenancy/OrganizationsApi.ts"
import { ProjectMembersApi } from "./tenancy/ProjectMembersApi.ts"
import { ProjectsApi } from "./tenancy/ProjectsApi.ts"
import { SecretsApi } from "./configuration/SecretsApi.ts"
import { SkillsApi } from "./configuration/SkillsApi.ts"
import { ToolCallsApi } from "./runtime/ToolCallsApi.ts"
import { UserApi } from "./tenancy/UserApi.ts"

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
  .add(MachinesApi)
  .add(MachineRegistrationApi)
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
