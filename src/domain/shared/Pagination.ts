/**
 * Cursor pagination of lists: `?limit=1..100` (default 20) and `?cursor=`; a page is
 * `{ data, has_more, next_cursor }`. The cursor is opaque to clients: it encodes the id of the
 * last item returned (ids are time-ordered, so lists page in creation order by id).
 */
import { Schema } from "effect"

export const DEFAULT_PAGE_LIMIT = 20
export const MAX_PAGE_LIMIT = 100

export const ListQuery = Schema.Struct({
  limit: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, MAX_PAGE_LIMIT))
  ),
  cursor: Schema.optional(Schema.String)
})
export type ListQuery = typeof ListQuery.Type

export const Page = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    data: Schema.Array(item),
    has_more: Schema.Boolean,
    next_cursor: Schema.NullOr(Schema.String)
  })

export interface PageOf<A> {
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
  readonly next_cursor: string | null
}

export const encodeCursor = (lastId: string): string => Buffer.from(lastId, "utf8").toString("base64url")

/** The id a cursor stands for, or undefined when it is not one this server made. */
export const decodeCursor = (cursor: string): string | undefined => {
  const id = Buffer.from(cursor, "base64url").toString("utf8")
  return /^[a-z]+_[a-z2-7]{26}$/.test(id) ? id : undefined
}

/** Builds a page from `limit + 1` rows fetched after the cursor, ordered by `keyOf`. */
export const toPage = <A>(
  rows: ReadonlyArray<A>,
  limit: number,
  keyOf: (row: A) => string
): PageOf<A> => {
  const data = rows.slice(0, limit)
  const has_more = rows.length > limit
  return { data, has_more, next_cursor: has_more ? encodeCursor(keyOf(data[data.length - 1])) : null }
}

export const mapPage = <A, B>(f: (a: A) => B) => (page: PageOf<A>): PageOf<B> => ({ ...page, data: page.data.map(f) })
