/** Actors (docs/agents-api.md): the external users a project attributes inputs to. */
import { Schema } from "effect"
import { ActorId, OrgId, ProjectId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { strict } from "../shared/Strict.ts"

export class Actor extends Schema.Class<Actor>("Actor")({
  id: ActorId,
  org_id: OrgId,
  project_id: ProjectId,
  external_id: Schema.String,
  display_name: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

export const CreateActor = Schema.Struct({
  external_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  display_name: Schema.optional(Schema.String.pipe(Schema.maxLength(255)))
}).annotations(strict)
