import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Agent configs (docs/agent-configs.md): immutable; one row per distinct (project, source,
 * effective definition), which makes re-sending a source race-free idempotent. Every configured
 * model a config uses is referenced by a foreign key, so a model in use cannot be deleted.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_configs (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      source text NOT NULL,
      source_format text NOT NULL CHECK (source_format IN ('yaml', 'json')),
      source_hash text NOT NULL,
      effective_definition_hash text NOT NULL,
      instruction_hash text NOT NULL,
      configured_model_id text NOT NULL REFERENCES configured_models,
      model_overrides jsonb NOT NULL,
      compiled_definition jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE UNIQUE INDEX agent_configs_content_key
    ON agent_configs (project_id, source_hash, effective_definition_hash)`
  yield* sql`CREATE INDEX agent_configs_project_idx ON agent_configs (project_id, id)`
  yield* sql`
    CREATE TABLE agent_config_models (
      agent_config_id text NOT NULL REFERENCES agent_configs ON DELETE CASCADE,
      configured_model_id text NOT NULL REFERENCES configured_models,
      PRIMARY KEY (agent_config_id, configured_model_id)
    )`
  yield* sql`CREATE INDEX agent_config_models_model_idx ON agent_config_models (configured_model_id)`
})
