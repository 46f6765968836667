/**
 * The whole HTTP API, safe to import from a client. Served under `/v1`; the server also answers
 * the same routes under `/api/v1` (src/layers/http/RequestGuards.ts).
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { strict } from "../domain/shared/Strict.ts"
import { ApiErrors } from "./ApiErrors.ts"
import { ActorsApi } from "./runtime/ActorsApi.ts"
import { AgentConfigsApi } from "./configuration/AgentConfigsApi.ts"
import { AgentEventStreamApi } from "./runtime/AgentEventStreamApi.ts"
import { AgentsApi } from "./runtime/AgentsApi.ts"
import { HealthApi } from "./HealthApi.ts"
import { MachineRegistrationApi } from "./machines/MachineRegistrationApi.ts"
import { MachinesApi } from "./machines/MachinesApi.ts"
import { InteractionsApi } from "./runtime/InteractionsApi.ts"
import { InvitationsApi } from "./tenancy/InvitationsApi.ts"
import { MembersApi } from "./tenancy/MembersApi.ts"
import { ModelProviderConfigsApi } from "./configuration/ModelProviderConfigsApi.ts"
import { ModelsApi } from "./configuration/ModelsApi.ts"
import { MachinePoolsApi } from "./machines/MachinePoolsApi.ts"
import { OrganizationApiKeysApi } from "./tenancy/OrganizationApiKeysApi.ts"
import { OrganizationsApi } from "./tenancy/OrganizationsApi.ts"
import { ProjectMembersApi } from "./tenancy/ProjectMembersApi.ts"
import { ProjectsApi } from "./tenancy/ProjectsApi.ts"
import { SecretsApi } from "./configuration/SecretsApi.ts"
import { SkillsApi } from "./configuration/SkillsApi.ts"
import { ToolCallsApi } from "./runtime/ToolCallsApi.ts"
import { BrowserSessionsApi } from "./tenancy/BrowserSessionsApi.ts"
import { UserApi } from "./tenancy/UserApi.ts"
import { UserSettingsApi } from "./workspaces/UserSettingsApi.ts"
import { WorkspacesApi } from "./workspaces/WorkspacesApi.ts"

export const API_VERSION = "0.1.0"

export class Api extends HttpApi.make("agent-platform")
  .add(UserApi)
  .add(BrowserSessionsApi)
  .add(UserSettingsApi)
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
  .add(MachinePoolsApi)
  .add(AgentConfigsApi)
  .add(AgentsApi)
  .add(AgentEventStreamApi)
  .add(ToolCallsApi)
  .add(InteractionsApi)
  .add(ActorsApi)
  .add(MachinesApi)
  .add(MachineRegistrationApi)
  .add(WorkspacesApi)
  .prefix("/v1")
  .add(HealthApi)
  .middleware(ApiErrors)
  // Every request body takes no property it does not list (Effect 3: each body schema's `parseOptions`).
  .annotate(HttpApi.PayloadParseOptions, strict)
  .annotate(OpenApi.Title, "Agent Platform API")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(
    OpenApi.Description,
    "A self-hosted agent platform. Organizations hold members, invitations, API keys, projects, secrets, " +
      "model provider configs, models, skills and machine pools, granted to projects. A project creates agent configs from YAML " +
      "or JSON and launches agents from them; agents take inputs (queued in a backlog while busy), run turns " +
      "against the configured model, call tools, pause on approvals and questions (interactions) and record " +
      "everything in an event timeline, readable page by page or as Server-Sent Events. " +
      "Authenticate with `Authorization: Bearer <API key>`, or from a browser with a session " +
      "(`POST /v1/user/sessions`: its cookie, and its CSRF token in `x-csrf-token`). Every /v1 route is also served under /api/v1."
  )
  .annotate(OpenApi.Servers, [{ url: "/", description: "The server that serves this document" }])
{}
