/** Users: a person, known by their e-mail address. */
import { Schema } from "effect"
import { UserId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export const Email = Schema.Trim.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@]+$/, { message: () => "must be an e-mail address" })
).annotations({ identifier: "Email" })
export type Email = typeof Email.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Schema.String,
  created_at: Timestamp
}) {}
