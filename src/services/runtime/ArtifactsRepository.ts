/** The `artifacts` table: the bytes of media submitted with inputs and tool results. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { AgentId, ArtifactId } from "../../domain/shared/Ids.ts"

export const Artifact = Schema.Struct({ id: ArtifactId, media_type: Schema.String, bytes: Schema.Uint8Array })
export type Artifact = typeof Artifact.Type

const NewArtifact = Schema.Struct({
  id: ArtifactId,
  agent_id: AgentId,
  media_type: Schema.String,
  size_bytes: Schema.Int,
  sha256: Schema.String,
  bytes: Schema.Uint8Array
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.void({
    Request: NewArtifact,
    execute: (artifact) => sql`INSERT INTO artifacts ${sql.insert(artifact)}`
  })

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ agentId: AgentId, id: ArtifactId }),
    Result: Artifact,
    execute: ({ agentId, id }) => sql`SELECT id, media_type, bytes FROM artifacts WHERE id = ${id} AND agent_id = ${agentId}`
  })

  return {
    insert: (artifact: typeof NewArtifact.Type) => Effect.orDie(insert(artifact)),
    find: (agentId: AgentId, id: ArtifactId) => Effect.orDie(find({ agentId, id }))
  } as const
})

export class ArtifactsRepository extends Context.Service<ArtifactsRepository, Effect.Success<typeof make>>()("ArtifactsRepository") {
  static readonly layer = Layer.effect(this, make)
}
