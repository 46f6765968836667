/**
 * Cursor pagination of lists (docs/api-conventions.md): `?limit=1..100` (default 20) and
 * `?cursor=`; a page is `{ data, has_more, next_cursor }`. The cursor is opaque to clients; the
 * server makes and reads it (src/services/shared/Paging.ts).
 */
import { Schema } from "effect"
import { DecimalInteger } from "./DecimalInteger.ts"
import { optional } from "./Optional.ts"

export const DEFAULT_PAGE_LIMIT = 20
export const MAX_PAGE_LIMIT = 100

export const ListQuery = Schema.Struct({
  limit: optional(DecimalInteger(1, MAX_PAGE_LIMIT)),
  cursor: optional(Schema.String)
})
export type ListQuery = typeof ListQuery.Type

export const Page = <S extends Schema.Top>(item: S) =>
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
