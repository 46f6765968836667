import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * An agent row counts its queued inputs (`queued_inputs`), so that the transaction that ends a
 * turn, having locked the row, knows without another read whether an input waits, and an input
 * sent to a busy agent knows whether the backlog is full. Triggers on `agent_inputs` keep the
 * count: every insert, status change and deletion of a queued input updates it in the same
 * transaction, whatever code makes the change (docs/runtime.md, "Inputs and the backlog").
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agents ADD COLUMN queued_inputs integer NOT NULL DEFAULT 0 CHECK (queued_inputs >= 0)`
  yield* sql`
    UPDATE agents SET queued_inputs = queued.count
    FROM (SELECT agent_id, count(*) AS count FROM agent_inputs WHERE status = 'queued' GROUP BY agent_id) AS queued
    WHERE agents.id = queued.agent_id`
  yield* sql`
    CREATE FUNCTION agent_inputs_count_queued() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' AND OLD.status = 'queued' THEN
        UPDATE agents SET queued_inputs = queued_inputs - 1 WHERE id = OLD.agent_id;
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.status = 'queued' THEN
        UPDATE agents SET queued_inputs = queued_inputs + 1 WHERE id = NEW.agent_id;
      END IF;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER agent_inputs_queued_inserted AFTER INSERT ON agent_inputs
    FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION agent_inputs_count_queued()`
  yield* sql`
    CREATE TRIGGER agent_inputs_queued_changed AFTER UPDATE OF status, agent_id ON agent_inputs
    FOR EACH ROW WHEN ((OLD.status = 'queued' OR NEW.status = 'queued') AND
      (OLD.status IS DISTINCT FROM NEW.status OR OLD.agent_id IS DISTINCT FROM NEW.agent_id))
    EXECUTE FUNCTION agent_inputs_count_queued()`
  yield* sql`
    CREATE TRIGGER agent_inputs_queued_deleted AFTER DELETE ON agent_inputs
    FOR EACH ROW WHEN (OLD.status = 'queued') EXECUTE FUNCTION agent_inputs_count_queued()`
})
