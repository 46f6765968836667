import { Effect } from "effect"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import { decodeCursor, DEFAULT_PAGE_LIMIT, type ListQuery } from "../../domain/shared/Pagination.ts"

export interface PageRequest {
  readonly limit: number
  /** Return rows whose key is greater than this one. */
  readonly after: string | undefined
}

/** Reads `limit` and `cursor` of a list request; a cursor this server did not make is `invalid_request`. */
export const pageRequest = (query: ListQuery): Effect.Effect<PageRequest, InvalidRequest> => {
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT
  if (query.cursor === undefined) return Effect.succeed({ limit, after: undefined })
  const after = decodeCursor(query.cursor)
  return after === undefined
    ? Effect.fail(
      new InvalidRequest({
        error: "The cursor is not one this server returned; pass next_cursor from the previous page",
        issues: [{ path: "/cursor", message: "unknown cursor" }]
      })
    )
    : Effect.succeed({ limit, after })
}
