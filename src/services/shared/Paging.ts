/**
 * Keyset pagination, the one way lists page (docs/api-conventions.md, "Lists"). A service turns
 * a list request into a `Keyset` (the key to start after, how many rows to read) with `paged`; the
 * repository reads that window with a `keysetQuery`; `paged` makes the page and its next cursor.
 *
 * A cursor is bound to the list it was made for (`listOf`: the list's name and what selects its
 * rows): it is the base64url of a tag and the last key returned, the tag a digest of the list and
 * the key. A cursor of another list, an altered one or one this server did not make is
 * `invalid_request`; it never pages a list it was not made for.
 */
import { type SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Effect, Result, Schema } from "effect"
import { Base64Url } from "effect/encoding"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import { DEFAULT_PAGE_LIMIT, type ListQuery, type PageOf } from "../../domain/shared/Pagination.ts"
import { sha256Hex } from "./Hash.ts"

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
const idKey: CursorKey<string> = {
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

/**
 * Which list a page is of: the list's name and the values that select its rows (the
 * organization, project or agent, a filter, the caller where the rows depend on who asks).
 * Two requests page the same list when these are equal; a cursor is good only for its own list.
 */
export interface ListOf {
  readonly identity: string
}

/** The list `name` of the rows `selectors` select (undefined: a filter not given). */
export const listOf = (name: string, ...selectors: ReadonlyArray<string | null | undefined>): ListOf => ({
  identity: JSON.stringify([name, ...selectors.map((selector) => selector ?? null)])
})

/**
 * The tag that binds a cursor to its list: 64 bits of the SHA-256 of the list and the key. Not a
 * secret: a cursor grants nothing (every request checks access as usual), the tag only makes a
 * cursor of another list, or an altered one, fail loudly instead of paging the wrong list.
 */
const tagOf = (list: ListOf, keyText: string) => sha256Hex(`${list.identity}\n${keyText}`).slice(0, 16)

const writeCursor = <Key>(list: ListOf, key: CursorKey<Key>, value: Key): string => {
  const keyText = key.write(value)
  return Base64Url.encode(`${tagOf(list, keyText)}.${keyText}`)
}

const foreignCursor = new InvalidRequest({
  error: "The cursor is not from this list: pass the next_cursor this list returned, " +
    "or start again without a cursor (a cursor is bound to the list and the filters it was made for)",
  issues: [{ path: "/cursor", message: "is not a cursor of this list; start again without one" }]
})

const readCursor = <Key>(list: ListOf, key: CursorKey<Key>, cursor: string): Effect.Effect<Key, InvalidRequest> =>
  Result.match(Base64Url.decodeString(cursor), {
    onFailure: () => Effect.fail(foreignCursor),
    onSuccess: (text) => {
      const match = /^([0-9a-f]{16})\.(.*)$/s.exec(text)
      if (match === null || match[1] !== tagOf(list, match[2])) return Effect.fail(foreignCursor)
      const value = key.read(match[2])
      return value === undefined ? Effect.fail(foreignCursor) : Effect.succeed(value)
    }
  })

/**
 * One page of the list `list`, keyed by `key`: reads the request's cursor (which must be one of
 * this list's) and limit, fetches `limit + 1` rows after the cursor's key with `fetch`, and
 * answers the first `limit` with the cursor of the last, whose key `keyOf` gives.
 */
export const pagedBy = <Key, A, E, R>(
  key: CursorKey<Key>,
  list: ListOf,
  query: ListQuery,
  fetch: (keyset: Keyset<Key>) => Effect.Effect<ReadonlyArray<A>, E, R>,
  keyOf: (item: A) => Key
): Effect.Effect<PageOf<A>, E | InvalidRequest, R> =>
  Effect.gen(function*() {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    const after = query.cursor === undefined ? undefined : yield* readCursor(list, key, query.cursor)
    const rows = yield* fetch({ after, limit })
    const data = rows.slice(0, limit)
    const has_more = rows.length > limit
    return {
      data,
      has_more,
      next_cursor: has_more ? writeCursor(list, key, keyOf(data[data.length - 1])) : null
    }
  })

/** One page of a list keyed by id (the usual case). */
export const paged = <A, E, R>(
  list: ListOf,
  query: ListQuery,
  fetch: (keyset: Keyset) => Effect.Effect<ReadonlyArray<A>, E, R>,
  keyOf: (item: A) => string
): Effect.Effect<PageOf<A>, E | InvalidRequest, R> => pagedBy(idKey, list, query, fetch, keyOf)

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
  readonly filter: Schema.Codec<Filter, FilterEncoded>
  /** The rows, decoded. */
  readonly result: Schema.Codec<A, AEncoded>
  /** The query up to the end of its WHERE clause; the keyset's condition is ANDed to it. */
  readonly select: (filter: FilterEncoded) => Statement.Fragment
  /** The key column (`id` unless told). */
  readonly column?: string
  readonly order?: "ascending" | "descending"
}

/** A repository's query of one page of a list keyed by `key` (ids: `keysetQuery`). */
export const keysetQueryBy = <Key extends string | number, KeyEncoded, Filter, FilterEncoded, A, AEncoded>(
  sql: SqlClient.SqlClient,
  key: Schema.Codec<Key, KeyEncoded>,
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
