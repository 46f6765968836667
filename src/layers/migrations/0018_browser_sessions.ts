import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Browser sessions (src/services/tenancy/BrowserSessions.ts): a session cookie's hash, its CSRF
 * token's hash, and the personal API key that opened it, whose deletion ends the session.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE browser_sessions (
      id text PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      csrf_token_hash text NOT NULL,
      api_key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX browser_sessions_api_key_idx ON browser_sessions (api_key_id)`
})
