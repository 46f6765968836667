/** Shared by the grant endpoints of secrets, models and skills. */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest } from "../domain/Errors.ts"
import type { OrgId, ProjectId } from "../domain/Ids.ts"
import { firstOr } from "./Sql.ts"

/** A grant's target must be a project of the same organization; anything else is `invalid_request`. */
export const requireGrantTarget = (sql: SqlClient.SqlClient, orgId: OrgId, projectId: ProjectId) =>
  Effect.flatMap(
    sql<{ id: ProjectId }>`SELECT id FROM projects WHERE id = ${projectId} AND org_id = ${orgId}`.pipe(Effect.orDie),
    firstOr(() =>
      new InvalidRequest({
        error: `Project ${projectId} is not a project of organization ${orgId}; grant to one of its projects`,
        issues: [{ path: "/target_project_id", message: "no such project in this organization" }]
      })
    )
  )
