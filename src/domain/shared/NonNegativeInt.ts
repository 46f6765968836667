/** A count, size or position: an integer, 0 or more. */
import { Schema } from "effect"

export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
