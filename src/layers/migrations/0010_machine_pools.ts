import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Machine pools and their project grants (docs/machine-pools.md). A pool's auth secret, and the
 * secrets of its secret environment, cannot be deleted while the pool holds them (checked by
 * SecretReferences; the auth secret is also backed by its key). Sizes are checked by the
 * service against the pool's provider; the table keeps the bounds every pool shares.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE machine_pools (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      management_kind text NOT NULL CHECK (management_kind IN ('tenant', 'cluster')),
      provider text NOT NULL CHECK (provider IN ('docker', 'local')),
      provider_auth_secret_id text NOT NULL REFERENCES secrets,
      provider_config jsonb NOT NULL DEFAULT '{}',
      default_machine_cpu integer CHECK (default_machine_cpu >= 1),
      default_machine_memory_mb integer CHECK (default_machine_memory_mb >= 1),
      default_machine_env jsonb NOT NULL DEFAULT '{}',
      default_machine_secret_env jsonb NOT NULL DEFAULT '{}',
      default_machine_provider_options jsonb NOT NULL DEFAULT '{}',
      default_cwd text,
      runtime_protection_enabled boolean NOT NULL DEFAULT false,
      max_total_machines integer NOT NULL CHECK (max_total_machines >= 1),
      max_total_cpu integer CHECK (max_total_cpu >= 1),
      max_total_memory_mb integer CHECK (max_total_memory_mb >= 1),
      min_machine_cpu integer CHECK (min_machine_cpu >= 1),
      min_machine_memory_mb integer CHECK (min_machine_memory_mb >= 1),
      max_machine_cpu integer CHECK (max_machine_cpu >= 1),
      max_machine_memory_mb integer CHECK (max_machine_memory_mb >= 1),
      delete_after_idle_minutes integer CHECK (delete_after_idle_minutes >= 5),
      metadata jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (org_id, name)
    )`
  yield* sql`CREATE INDEX machine_pools_secret_idx ON machine_pools (provider_auth_secret_id)`
  yield* sql`
    CREATE TABLE machine_pool_grants (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      machine_pool_id text NOT NULL REFERENCES machine_pools ON DELETE CASCADE,
      target_project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (machine_pool_id, target_project_id)
    )`
  yield* sql`CREATE INDEX machine_pool_grants_project_idx ON machine_pool_grants (target_project_id)`
})
