import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Machines started by machine pools (docs/machine-pools.md, "Provisioning"): a pool machine is a
 * machine row with `machine_pool_id`, serving one agent, with its lifecycle (`pool_state`), its
 * size, the provider's handle, the registration token of its daemon (hashed) and when it was last used.
 * A request for a pool machine waits unassigned (`machine_id` null, `machine_pool_id` set) until
 * the pool admits it to a machine.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE machines
      ADD COLUMN pool_state text CHECK (pool_state IN ('provisioning', 'running', 'deleting', 'deleted')),
      ADD COLUMN agent_id text,
      ADD COLUMN cpu integer,
      ADD COLUMN memory_mb integer,
      ADD COLUMN delete_after_idle_minutes integer,
      ADD COLUMN provider_ref text,
      ADD COLUMN registration_token_hash text UNIQUE,
      ADD COLUMN last_used_at timestamptz,
      ADD COLUMN state_changed_at timestamptz,
      ADD COLUMN failure text`
  yield* sql`CREATE INDEX machines_pool_idx ON machines (machine_pool_id, agent_id) WHERE machine_pool_id IS NOT NULL`
  yield* sql`
    ALTER TABLE machine_requests
      ALTER COLUMN machine_id DROP NOT NULL,
      ADD COLUMN machine_pool_id text`
  yield* sql`
    CREATE INDEX machine_requests_unassigned_idx ON machine_requests (machine_pool_id, created_at)
    WHERE machine_id IS NULL AND state = 'pending'`
})
