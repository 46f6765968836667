/** Actors (docs/agents-api.md): the external users a project attributes inputs to. */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { ActorId, OrgId, ProjectId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export class Actor extends Schema.Class<Actor>("Actor")({
  id: ActorId,
  org_id: OrgId,
  project_id: ProjectId,
  external_id: Schema.String,
  display_name: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

export const CreateActor = Schema.Struct({
  external_id: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255))),
  display_name: optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(255))))
})
