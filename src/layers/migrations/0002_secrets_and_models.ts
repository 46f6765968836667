import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Secrets with project grants; model provider configs; configured models with immutable
 * revisions and project grants (docs/secrets.md, docs/models.md).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A personal secret belongs to a membership: removing the member deletes it.
  yield* sql`
    CREATE TABLE secrets (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      owner_user_id text,
      name text NOT NULL,
      description text,
      value_sealed text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (org_id, owner_user_id) REFERENCES org_members (org_id, user_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE UNIQUE INDEX secrets_org_name_key ON secrets (org_id, name) WHERE owner_user_id IS NULL`
  yield* sql`
    CREATE UNIQUE INDEX secrets_personal_name_key ON secrets (org_id, owner_user_id, name)
    WHERE owner_user_id IS NOT NULL`
  yield* sql`
    CREATE TABLE secret_grants (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      secret_id text NOT NULL REFERENCES secrets ON DELETE CASCADE,
      target_project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (secret_id, target_project_id)
    )`
  yield* sql`CREATE INDEX secret_grants_project_idx ON secret_grants (target_project_id)`

  // Secrets and provider configs go together when the organization is deleted; otherwise a
  // referenced secret cannot be deleted (checked in the service, backed by the key).
  yield* sql`
    CREATE TABLE model_provider_configs (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      api_format text NOT NULL
        CHECK (api_format IN ('openai-responses', 'openai-chat-completions', 'anthropic-messages')),
      base_url text NOT NULL,
      auth_secret_id text REFERENCES secrets,
      management_kind text NOT NULL DEFAULT 'tenant' CHECK (management_kind IN ('tenant', 'cluster')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (org_id, name)
    )`
  yield* sql`
    CREATE INDEX model_provider_configs_secret_idx ON model_provider_configs (auth_secret_id)
    WHERE auth_secret_id IS NOT NULL`

  yield* sql`
    CREATE TABLE configured_models (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      provider_config_id text NOT NULL REFERENCES model_provider_configs,
      name text NOT NULL,
      current_revision_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (provider_config_id, name)
    )`
  yield* sql`CREATE INDEX configured_models_org_idx ON configured_models (org_id)`
  yield* sql`
    CREATE TABLE model_revisions (
      id text PRIMARY KEY,
      model_id text NOT NULL REFERENCES configured_models ON DELETE CASCADE,
      provider_model_slug text NOT NULL,
      api_variant text NOT NULL,
      context_window_tokens integer NOT NULL CHECK (context_window_tokens >= 1),
      max_output_tokens integer CHECK (max_output_tokens BETWEEN 1 AND context_window_tokens),
      default_max_output_tokens integer
        CHECK (default_max_output_tokens BETWEEN 1 AND coalesce(max_output_tokens, context_window_tokens)),
      default_cache_retention text NOT NULL CHECK (default_cache_retention IN ('none', 'short', 'long')),
      supports_tools boolean NOT NULL,
      supports_reasoning boolean NOT NULL,
      default_reasoning_effort text NOT NULL,
      supported_reasoning_efforts text[] NOT NULL,
      input_modalities text[] NOT NULL CHECK (cardinality(input_modalities) >= 1),
      output_modalities text[] NOT NULL CHECK (cardinality(output_modalities) >= 1),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX model_revisions_model_idx ON model_revisions (model_id, id)`
  yield* sql`
    ALTER TABLE configured_models ADD CONSTRAINT configured_models_current_revision_fkey
    FOREIGN KEY (current_revision_id) REFERENCES model_revisions DEFERRABLE INITIALLY DEFERRED`
  yield* sql`
    CREATE TABLE model_grants (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      model_id text NOT NULL REFERENCES configured_models ON DELETE CASCADE,
      target_project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (model_id, target_project_id)
    )`
  yield* sql`CREATE INDEX model_grants_project_idx ON model_grants (target_project_id)`
})
