import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The fingerprint of the key the database's secrets are encrypted with (src/layers/SecretKeyCheck.ts):
 * one row, written by the first server to start, compared by every later one.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE secret_key_check (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      fingerprint text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
})
