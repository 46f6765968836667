/** Users: a person, known by their e-mail address. */
import { Schema } from "effect"
import { UserId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export const Email = Schema.Trim.pipe(
  Schema.check(Schema.isMaxLength(254)),
  Schema.check(Schema.isPattern(/^[^\s@]+@[^\s@]+$/u, { message: "must be an e-mail address" }))
).annotate({ identifier: "Email" })
export type Email = typeof Email.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Schema.String,
  created_at: Timestamp
}) {}
