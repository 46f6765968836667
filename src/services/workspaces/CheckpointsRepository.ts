/** The `checkpoints` table: packed worktrees (docs/workspaces.md, "Checkpoints"), addressed by the SHA-256 of their bytes. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { WorkspaceId } from "../../domain/shared/Ids.ts"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const content = SqlSchema.findOneOption({
    Request: Schema.Struct({ workspaceId: WorkspaceId, id: Schema.String }),
    Result: Schema.Struct({ content: Schema.Uint8Array }),
    execute: ({ id, workspaceId }) =>
      sql`SELECT content FROM checkpoints WHERE id = ${id} AND workspace_id = ${workspaceId}`
  })

  return {
    /** Stores the bytes under their id; the same bytes again change nothing. */
    store: (workspaceId: WorkspaceId, id: string, bytes: Uint8Array, metadata: Readonly<Record<string, unknown>>) =>
      Effect.orDie(sql`
        INSERT INTO checkpoints (id, workspace_id, content, size, metadata)
        VALUES (${id}, ${workspaceId}, ${bytes}, ${bytes.byteLength}, ${JSON.stringify(metadata)}::jsonb)
        ON CONFLICT (workspace_id, id) DO NOTHING`),
    content: (workspaceId: WorkspaceId, id: string) =>
      Effect.map(Effect.orDie(content({ workspaceId, id })), (row) => row)
  } as const
})

export class CheckpointsRepository extends Context.Service<CheckpointsRepository, Effect.Success<typeof make>>()("CheckpointsRepository") {
  static readonly layer = Layer.effect(this, make)
}
