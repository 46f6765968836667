import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** A user's settings: one JSON document per user (docs/user-settings.md), gone with the user. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE user_settings (
      user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      document jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
