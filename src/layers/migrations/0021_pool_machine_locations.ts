import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Where a pool machine was started (docs/scale-out.md, "Pool machines"): its provider's location
 * for the process that started it (`local:<host>:<machines root>`, `docker:<tcp endpoint>`,
 * `docker:<host>:<unix socket>`). Only the processes of that location see the machine at the
 * provider, so only they judge whether it has ended and stop it. Rows from before are NULL, read
 * as every process's location, as every machine was then.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE machines ADD COLUMN provider_location text`
})
