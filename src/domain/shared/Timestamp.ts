import { Schema, SchemaTransformation } from "effect"

/** RFC 3339 in UTC on the wire, a Date in code. */
export const Timestamp = Schema.String.annotate({ identifier: "Timestamp", format: "date-time" }).pipe(
  Schema.decodeTo(Schema.Date, SchemaTransformation.dateFromString)
)

const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/

/** The last day of `month` (1 to 12) of `year`. */
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * Whether `text` is an RFC 3339 date-time of a day and time that exist, at most in the year 9999
 * once in UTC (the database's dates have four digits). A leap second (`:60`) is refused: a Date
 * has none.
 */
const isRfc3339 = (text: string) => {
  const parts = RFC_3339.exec(text)
  if (parts === null) return false
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number)
  const [offsetHours, offsetMinutes] = parts.slice(7).map((part) => part === undefined ? 0 : Number(part))
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) &&
    hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59 &&
    new Date(text).getUTCFullYear() <= 9999
}

/**
 * A date-time a request sends: RFC 3339 exactly (`2030-01-01T00:00:00Z`, a fraction and an offset
 * allowed) of a day and time that exist. Taken as `Date.parse` takes text, `2030-02-30` had been
 * March 2nd, an HTTP date or a time without offset (local time) accepted, and a year past 9999 a
 * 500 (the database refused it).
 */
export const RequestTimestamp = Schema.String.annotate({ format: "date-time" }).pipe(
  Schema.check(Schema.makeFilter((text) => isRfc3339(text) || "must be an RFC 3339 date-time, such as 2030-01-01T00:00:00Z")),
  Schema.decodeTo(Schema.Date, SchemaTransformation.dateFromString)
)
