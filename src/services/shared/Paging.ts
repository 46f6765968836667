/**
 * Keyset pagination, the one way lists page (docs/api-conventions.md, "Lists"). A service turns
 * a list request into a `Keyset` (the key to start after, how many rows to read) with `paged`; the
 * repository reads that window with a `keysetQuery`; `paged` makes the page and its next cursor.
 * A cursor is the base64url of the last key returned; one this server did not make is
 * `invalid_request`.
 */
import { type SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Either, Encoding, Schema } from "effect"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import { DEFAULT_PAGE_LIMIT, type ListQuery, type PageOf } from "../../domain/shared/Pagination.ts"

/** The rows of one page: those whose key comes after `after` in the list's order, `limit + 1` of them at most. */
export interface Keyset<Key = string> {
  readonly after: Key | undefined
  readonly limit: number
}


/** How a list's key is written into a cursor and read back. */
export interface CursorKey<Key> {
  readonly write: (key: Key) => string
  /** The key, or undefined when the text is not one this server wrote. */
  readonly read: (text: string) => Key | undefined
}

/** Lists keyed by id (the usual case): ids are time-ordered, so id order is creation order. */
export const idKey: CursorKey<string> = {
  write: (id) => id,
  read: (text) => /^[a-z]+_[a-z2-7]{26}$/.test(text) ? text : undefined
}

/** Lists keyed by a version number (skill versions). */
export const versionKey: CursorKey<number> = {
  write: (version) => `v${version}`,
  read: (text) => {
    const match = /^v([0-9]{1,9})$/.exec(text)
    return match === null ? undefined : Number(match[1])
  }
}

const unknownCursor = new InvalidRequest({
  error: "The cursor is not one this server returned; pass next_cursor from the previous page",
  issues: [{ path: "/cursor", message: "unknown cursor" }]
})

const readCursor = <Key>(cursor: string, key: CursorKey<Key>): Effect.Effect<Key, InvalidRequest> =>
  Either.match(Encoding.decodeBase64UrlString(cursor), {
    onLeft: () => Effect.fail(unknownCursor),
    onRight: (text) => {
      const value = key.read(text)
      return value === undefined ? Effect.fail(unknownCursor) : Effect.succeed(value)
    }
  })

/**
 * One page of a list keyed by `key`: reads the request's cursor and limit, fetches `limit + 1`
 * rows after the cursor's key with `fetch`, and answers the first `limit` with the cursor of the
 * last, whose key `keyOf` gives.
 */
export const pagedBy = <Key, A, E, R>(
  key: CursorKey<Key>,
  query: ListQuery,
  fetch: (keyset: Keyset<Key>) => Effect.Effect<ReadonlyArray<A>, E, R>,
  keyOf: (item: A) => Key
): Effect.Effect<PageOf<A>, E | InvalidRequest, R> =>
  Effect.gen(function*() {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    const after = query.cursor === undefined ? undefined : yield* readCursor(query.cursor, key)
    const rows = yield* fetch({ after, limit })
    const data = rows.slice(0, limit)
    const has_more = rows.length > limit
    return {
      data,
      has_more,
      next_cursor: has_more ? Encoding.encodeBase64Url(key.write(keyOf(data[data.length - 1]))) : null
    }
  })

/** One page of a list keyed by id (the usual case). */
export const paged = <A, E, R>(
  query: ListQuery,
  fetch: (keyset: Keyset) => Effect.Effect<ReadonlyArray<A>, E, R>,
  keyOf: (item: A) => string
): Effect.Effect<PageOf<A>, E | InvalidRequest, R> => pagedBy(idKey, query, fetch, keyOf)

/**
 * The SQL of a keyset window on `column` (ascending unless told): `after` is the condition to AND
 * into the WHERE clause, `orderAndLimit` ends the query.
 */
const keysetSql = <Key>(
  sql: SqlClient.SqlClient,
  column: string,
  keyset: Keyset<Key>,
  order: "ascending" | "descending" = "ascending"
): { readonly after: Statement.Fragment; readonly orderAndLimit: Statement.Fragment } => ({
  after: keyset.after === undefined
    ? sql``
    : order === "ascending"
    ? sql`AND ${sql(column)} > ${keyset.after}`
    : sql`AND ${sql(column)} < ${keyset.after}`,
  orderAndLimit: order === "ascending"
    ? sql`ORDER BY ${sql(column)} LIMIT ${keyset.limit + 1}`
    : sql`ORDER BY ${sql(column)} DESC LIMIT ${keyset.limit + 1}`
})

export interface KeysetQueryOptions<Filter, FilterEncoded, A, AEncoded> {
  /** What selects the list's rows (an organization id, a project id and a status, ...). */
  readonly filter: Schema.Schema<Filter, FilterEncoded>
  /** The rows, decoded. */
  readonly result: Schema.Schema<A, AEncoded>
  /** The query up to the end of its WHERE clause; the keyset's condition is ANDed to it. */
  readonly select: (filter: FilterEncoded) => Statement.Fragment
  /** The key column (`id` unless told). */
  readonly column?: string
  readonly order?: "ascending" | "descending"
}

/** A repository's query of one page of a list keyed by `key` (ids: `keysetQuery`). */
export const keysetQueryBy = <Key extends string | number, KeyEncoded, Filter, FilterEncoded, A, AEncoded>(
  sql: SqlClient.SqlClient,
  key: Schema.Schema<Key, KeyEncoded>,
  options: KeysetQueryOptions<Filter, FilterEncoded, A, AEncoded>
) => {
  const query = SqlSchema.findAll({
    Request: Schema.Struct({ filter: options.filter, after: Schema.UndefinedOr(key), limit: Schema.Int }),
    Result: options.result,
    execute: ({ filter, ...keyset }) => {
      const { after, orderAndLimit } = keysetSql(sql, options.column ?? "id", keyset, options.order)
      return sql`${options.select(filter)} ${after} ${orderAndLimit}`
    }
  })
  return (filter: Filter, keyset: Keyset<Key>) => Effect.orDie(query({ filter, ...keyset }))
}

/** A repository's query of one page of a list keyed by id. */
export const keysetQuery = <Filter, FilterEncoded, A, AEncoded>(
  sql: SqlClient.SqlClient,
  options: KeysetQueryOptions<Filter, FilterEncoded, A, AEncoded>
) => keysetQueryBy(sql, Schema.String, options)
