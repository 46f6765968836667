/**
 * A database failure that another attempt may not meet (docs/api-conventions.md, "When the
 * database fails"): the database cancels a request's transaction (a deadlock, a serialization
 * failure) and the request is answered `503 service_unavailable` saying to send it again, not
 * `500 internal_error`; nothing it wrote is kept, and sent again it succeeds. The database's own
 * error is raised by a trigger inside the request's INSERT, with the SQLSTATE Postgres gives a
 * transaction it cancels (40P01, 40001): two requests cannot be made to deadlock on purpose once
 * the platform's lock orders leave none, and the embedded database runs one statement at a time.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { rowTrigger } from "../support/DatabaseTriggers.ts"
import { describeApp, newUser, sendAs } from "../support/TestApp.ts"

const CANCELLATIONS = [
  { sqlState: "40P01", says: "it and another request's each waited for rows the other held (a deadlock)" },
  { sqlState: "40001", says: "another request changed the same rows at the same moment" }
] as const

describeApp()("a database failure a retry may not meet", (it) => {
  it.effect("a transaction the database cancels: 503 service_unavailable saying to send it again, nothing kept, and sent again it succeeds", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Retry" } })
      const projects = `/v1/orgs/${org.id}/projects`
      for (const { sqlState, says } of CANCELLATIONS) {
        const name = `Cancelled ${sqlState}`
        const refused = yield* Effect.scoped(Effect.andThen(
          rowTrigger(
            `cancel_${sqlState.toLowerCase()}`,
            "BEFORE INSERT",
            "projects",
            `NEW.name = '${name}'`,
            `RAISE EXCEPTION 'cancelled by the test' USING ERRCODE = '${sqlState}'`
          ),
          sendAs(owner, "POST", projects, { name })
        ))
        expect(refused.status).toBe(503)
        expect(refused.json).toEqual({
          code: "service_unavailable",
          error: `The database cancelled this request's transaction, undoing its writes: ${says}. Send the request again`
        })
        const listed = yield* owner.client.projects.list({ params: { orgID: org.id }, query: {} })
        expect(listed.data.map((project) => project.name)).not.toContain(name)

        const again = yield* sendAs(owner, "POST", projects, { name })
        expect(again.status).toBe(201)
        expect(again.json).toMatchObject({ name })
      }
    }))
})
