import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The workflow engine's stored results, from Effect 3's JSON to Effect 4's (docs/effect4-migration.md,
 * "Replies the engine stored"). `SqlMessageStorage` keeps each reply's `Exit` as JSON text in
 * `cluster_replies.payload` (kind 0), and a `deferred` message's `Exit` in `cluster_messages.payload`.
 * Effect 3 (@effect/cluster 0.60) wrote two things Effect 4's `Schema.Exit` refuses:
 *
 * - a failure's cause as a tree: `{"_tag":"Sequential"|"Parallel","left":…,"right":…}` over the
 *   leaves `{"_tag":"Empty"}`, `{"_tag":"Fail","error":…}`, `{"_tag":"Die","defect":…}` and
 *   `{"_tag":"Interrupt","fiberId":{"_tag":"Runtime","id":n,"startTimeMillis":t}|{"_tag":"None"}|
 *   {"_tag":"Composite","left":…,"right":…}}`. Effect 4 reads a list of reasons
 *   `[{"_tag":"Fail","error":…},{"_tag":"Die","defect":…},{"_tag":"Interrupt","fiberId":n|null}]`
 *   ("Expected array at cause");
 * - a success without value (a `void` workflow such as the turn, a deferred's `Exit.void`, a
 *   `resume`) as `{"_tag":"Success"}`: JSON.stringify drops an `undefined`. Effect 4 writes and
 *   needs `{"_tag":"Success","value":null}` ("Missing key at value").
 *
 * Both also occur inside a successful reply: a workflow's or activity's `Result` carries its own
 * `Exit` (`{"_tag":"Complete","exit":…}`) or a `Suspended` cause, and a `deferred` reply's value is
 * the deferred's `Exit`. This rewrites each of those places: a cause tree becomes its leaves in
 * order (left before right), `Empty` dropped, a fiber id its number (`None`: null; a composite: one
 * interrupt per fiber), an interrupt by a fiber already listed kept once (as Effect 4 combines
 * causes); a success without value gets `"value":null`. Errors and defects keep their JSON (Effect
 * 3's Schema.Defect wrote `{"name","message"}` or a string, which Effect 4's reads alike). The rest of
 * a row keeps its text byte for byte (the `json` type keeps what it does not rebuild); a row in
 * Effect 4's form is left alone, so running again changes nothing.
 *
 * The cluster creates its tables itself, after our migrations (src/layers/AppLive.ts builds the
 * engine over the migrated database): on a new database they do not exist yet, nothing to do.
 * The functions are plpgsql (plans kept across rows; about 0.5 ms a row) in `pg_temp`, dropped at
 * the end. NUL and unpaired surrogates (`\u0000`, `\ud800`), which Postgres's JSON parser refuses,
 * are swapped for a placeholder while a row is converted. A row the conversion still fails on is
 * left as it was and counted in a warning.
 */
const functions = [
  // `\u0000` and unpaired surrogates, which Postgres's JSON parser refuses, to a placeholder and back.
  // Tokens: an escaped backslash, a \u escape, any other escape, a run without backslash.
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_protect(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    RETURN (SELECT coalesce(string_agg(
        CASE WHEN m[1] ~* '^\\u(0000|d[89a-f])' THEN '~@v3u' || substr(m[1], 3) || '@~' ELSE m[1] END,
        '' ORDER BY n), '')
      FROM regexp_matches(t, '\\\\|\\u[0-9a-fA-F]{4}|\\.|[^\\]+', 'g') WITH ORDINALITY AS r(m, n));
  END
  $fn$`,
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_restore(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    RETURN regexp_replace(t, '~@v3u([0-9a-fA-F]{4})@~', '\\u\1', 'g');
  END
  $fn$`,
  // The object with key k set to v (in its place, or last), every other member's text as it was.
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_set(o json, k text, v json) RETURNS json
  LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    IF o -> k IS NULL THEN
      RETURN (SELECT json_object_agg(e.key, e.value ORDER BY e.n)
        FROM (SELECT key, value, n FROM json_each(o) WITH ORDINALITY AS member(key, value, n)
              UNION ALL SELECT k, v, 9223372036854775807) AS e);
    END IF;
    RETURN (SELECT json_object_agg(e.key, CASE WHEN e.key = k THEN v ELSE e.value END ORDER BY e.n)
      FROM json_each(o) WITH ORDINALITY AS e(key, value, n));
  END
  $fn$`,
  // Effect 3's cause tree to Effect 4's list of reasons: the leaves left to right, Empty dropped, an
  // interrupt per runtime fiber of its fiber id (null for None), one interrupt per fiber.
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_cause(c json) RETURNS json LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    RETURN (
      WITH RECURSIVE walk(node, path) AS (
        SELECT c, ARRAY[]::int[]
        UNION ALL
        SELECT child.node, walk.path || child.side
        FROM walk CROSS JOIN LATERAL (VALUES (walk.node -> 'left', 1), (walk.node -> 'right', 2)) AS child(node, side)
        WHERE json_typeof(walk.node) = 'object' AND walk.node ->> '_tag' IN ('Sequential', 'Parallel')
      ),
      fibers(interrupt, node, path) AS (
        SELECT walk.path, walk.node -> 'fiberId', ARRAY[]::int[]
        FROM walk WHERE json_typeof(walk.node) = 'object' AND walk.node ->> '_tag' = 'Interrupt'
        UNION ALL
        SELECT fibers.interrupt, child.node, fibers.path || child.side
        FROM fibers
        CROSS JOIN LATERAL (VALUES (fibers.node -> 'left', 1), (fibers.node -> 'right', 2)) AS child(node, side)
        WHERE json_typeof(fibers.node) = 'object' AND fibers.node ->> '_tag' = 'Composite'
      ),
      interrupts AS (
        SELECT interrupt, path, node -> 'id' AS fiber
        FROM fibers WHERE json_typeof(node) = 'object' AND node ->> '_tag' = 'Runtime'
        UNION ALL
        SELECT walk.path, ARRAY[]::int[], 'null'::json
        FROM walk WHERE json_typeof(walk.node) = 'object' AND walk.node ->> '_tag' = 'Interrupt' AND NOT EXISTS (
          SELECT 1 FROM fibers
          WHERE fibers.interrupt = walk.path
            AND json_typeof(fibers.node) = 'object' AND fibers.node ->> '_tag' = 'Runtime'
        )
      ),
      leaves AS (
        SELECT path, ARRAY[]::int[] AS sub, NULL::text AS fiber,
          CASE node ->> '_tag'
            WHEN 'Fail' THEN json_build_object('_tag', 'Fail', 'error', coalesce(node -> 'error', 'null'::json))
            ELSE json_build_object('_tag', 'Die', 'defect', coalesce(node -> 'defect', 'null'::json))
          END AS reason
        FROM walk WHERE json_typeof(node) = 'object' AND node ->> '_tag' IN ('Fail', 'Die')
        UNION ALL
        SELECT interrupt, path, fiber::text, json_build_object('_tag', 'Interrupt', 'fiberId', fiber) FROM interrupts
      ),
      numbered AS (
        SELECT reason, path, sub, fiber, row_number() OVER (PARTITION BY fiber ORDER BY path, sub) AS nth FROM leaves
      )
      SELECT coalesce(json_agg(reason ORDER BY path, sub), '[]'::json)
      FROM numbered WHERE fiber IS NULL OR nth = 1
    );
  END
  $fn$`,
  // An Exit: its cause converted, or the value a valueless success left out.
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_exit(e json) RETURNS json LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    IF json_typeof(e) IS DISTINCT FROM 'object' THEN
      RETURN e;
    ELSIF e ->> '_tag' = 'Failure' AND json_typeof(e -> 'cause') = 'object' THEN
      RETURN pg_temp.cluster_v3_set(e, 'cause', pg_temp.cluster_v3_cause(e -> 'cause'));
    ELSIF e ->> '_tag' = 'Success' AND e -> 'value' IS NULL THEN
      RETURN pg_temp.cluster_v3_set(e, 'value', 'null'::json);
    END IF;
    RETURN e;
  END
  $fn$`,
  // A workflow's or activity's Result: Complete's exit, Suspended's cause.
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_result(r json) RETURNS json LANGUAGE plpgsql IMMUTABLE AS $fn$
  DECLARE
    converted json;
  BEGIN
    IF json_typeof(r) IS DISTINCT FROM 'object' THEN
      RETURN r;
    ELSIF r ->> '_tag' = 'Complete' AND r -> 'exit' IS NOT NULL THEN
      converted := pg_temp.cluster_v3_exit(r -> 'exit');
      IF converted::text IS DISTINCT FROM (r -> 'exit')::text THEN
        RETURN pg_temp.cluster_v3_set(r, 'exit', converted);
      END IF;
    ELSIF r ->> '_tag' = 'Suspended' AND json_typeof(r -> 'cause') = 'object' THEN
      RETURN pg_temp.cluster_v3_set(r, 'cause', pg_temp.cluster_v3_cause(r -> 'cause'));
    END IF;
    RETURN r;
  END
  $fn$`,
  // A reply's Exit, and the Exit in its success value where the engine's RPC has one ("run" and
  // "activity": a Result; "deferred": the deferred's Exit; the clock's "run" and "resume": none).
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_reply(exit json, tag text, entity_type text) RETURNS json
  LANGUAGE plpgsql IMMUTABLE AS $fn$
  DECLARE
    converted json := pg_temp.cluster_v3_exit(exit);
    value json;
  BEGIN
    IF converted ->> '_tag' IS DISTINCT FROM 'Success' OR entity_type NOT LIKE 'Workflow/%' THEN
      RETURN converted;
    ELSIF tag IN ('run', 'activity') AND entity_type <> 'Workflow/-/DurableClock' THEN
      value := pg_temp.cluster_v3_result(converted -> 'value');
    ELSIF tag = 'deferred' THEN
      value := pg_temp.cluster_v3_exit(converted -> 'value');
    END IF;
    IF value IS NOT NULL AND value::text IS DISTINCT FROM (converted -> 'value')::text THEN
      RETURN pg_temp.cluster_v3_set(converted, 'value', value);
    END IF;
    RETURN converted;
  END
  $fn$`,
  // A deferred message's payload {"name":…,"exit":…}.
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_deferred_payload(p json) RETURNS json
  LANGUAGE plpgsql IMMUTABLE AS $fn$
  DECLARE
    converted json;
  BEGIN
    IF json_typeof(p) = 'object' AND p -> 'exit' IS NOT NULL THEN
      converted := pg_temp.cluster_v3_exit(p -> 'exit');
      IF converted::text IS DISTINCT FROM (p -> 'exit')::text THEN
        RETURN pg_temp.cluster_v3_set(p, 'exit', converted);
      END IF;
    END IF;
    RETURN p;
  END
  $fn$`,
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_rewrite(t text, tag text, entity_type text, is_reply boolean) RETURNS text
  LANGUAGE plpgsql AS $fn$
  DECLARE
    protect boolean := t ~ '\\u(0000|[dD][89a-fA-F])';
    source text;
    result text;
  BEGIN
    IF protect AND strpos(t, '~@v3u') > 0 THEN
      RAISE EXCEPTION 'the placeholder occurs in the payload';
    END IF;
    source := CASE WHEN protect THEN pg_temp.cluster_v3_protect(t) ELSE t END;
    IF is_reply THEN
      result := pg_temp.cluster_v3_reply(source::json, tag, entity_type)::text;
    ELSE
      result := pg_temp.cluster_v3_deferred_payload(source::json)::text;
    END IF;
    RETURN CASE WHEN protect THEN pg_temp.cluster_v3_restore(result) ELSE result END;
  END
  $fn$`,
  // Each WithExit reply (kind 0; a Chunk's kind is null) and deferred message that may hold Effect 3's
  // form (JSON.stringify writes it compactly), one at a time: a row that fails stays as it was, counted.
  String.raw`CREATE FUNCTION pg_temp.cluster_v3_convert() RETURNS TABLE (converted integer, unreadable integer)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    item record;
    rewritten text;
  BEGIN
    converted := 0;
    unreadable := 0;
    FOR item IN
      SELECT r.id, r.payload, m.tag, m.entity_type
      FROM cluster_replies r LEFT JOIN cluster_messages m ON m.id = r.request_id
      WHERE r.kind = 0 AND (r.payload LIKE '%"cause":{%' OR r.payload LIKE '%{"_tag":"Success"}%')
    LOOP
      BEGIN
        rewritten := pg_temp.cluster_v3_rewrite(item.payload, item.tag, item.entity_type, true);
        IF rewritten IS DISTINCT FROM item.payload THEN
          UPDATE cluster_replies SET payload = rewritten WHERE id = item.id;
          converted := converted + 1;
        END IF;
      EXCEPTION WHEN others THEN
        unreadable := unreadable + 1;
      END;
    END LOOP;
    FOR item IN
      SELECT m.id, m.payload FROM cluster_messages m
      WHERE m.kind = 0 AND m.tag = 'deferred' AND m.entity_type LIKE 'Workflow/%'
        AND (m.payload LIKE '%"cause":{%' OR m.payload LIKE '%{"_tag":"Success"}%')
    LOOP
      BEGIN
        rewritten := pg_temp.cluster_v3_rewrite(item.payload, NULL, NULL, false);
        IF rewritten IS DISTINCT FROM item.payload THEN
          UPDATE cluster_messages SET payload = rewritten WHERE id = item.id;
          converted := converted + 1;
        END IF;
      EXCEPTION WHEN others THEN
        unreadable := unreadable + 1;
      END;
    END LOOP;
    RETURN NEXT;
  END
  $fn$`
]

const dropFunctions = `DROP FUNCTION pg_temp.cluster_v3_convert(), pg_temp.cluster_v3_rewrite(text, text, text, boolean),
  pg_temp.cluster_v3_deferred_payload(json), pg_temp.cluster_v3_reply(json, text, text),
  pg_temp.cluster_v3_result(json), pg_temp.cluster_v3_exit(json), pg_temp.cluster_v3_cause(json),
  pg_temp.cluster_v3_set(json, text, json), pg_temp.cluster_v3_restore(text),
  pg_temp.cluster_v3_protect(text)`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [tables] = yield* sql<{ readonly present: boolean }>`
    SELECT to_regclass('cluster_replies') IS NOT NULL AND to_regclass('cluster_messages') IS NOT NULL AS present`
  if (!tables.present) return
  for (const statement of functions) yield* sql.unsafe(statement)
  const [counts] = yield* sql<{ readonly converted: number; readonly unreadable: number }>`
    SELECT converted, unreadable FROM pg_temp.cluster_v3_convert()`
  yield* sql.unsafe(dropFunctions)
  if (counts.unreadable > 0) {
    yield* Effect.logWarning(
      `${counts.unreadable} of the workflow engine's stored results could not be read as JSON and stay in Effect 3's form`
    )
  }
  if (counts.converted > 0) {
    yield* Effect.logInfo(`${counts.converted} of the workflow engine's stored results converted to Effect 4's form`)
  }
})
