import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { agentProject } from "../support/AgentProject.ts"
import { openEventStream } from "../support/EventStreamClient.ts"
import { TestAppLive } from "../support/TestApp.ts"

it.layer(TestAppLive())("dbg", (it) => {
  it.effect("sse", () =>
    Effect.gen(function*() {
      const setup = yield* agentProject()
      const agent = yield* setup.launch()
      const path = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agents/${agent.id}/events/stream`
      const s = yield* openEventStream(path, setup.owner.token).pipe(Effect.timeout("5 seconds"))
      console.log("opened", s.status, s.headers)
      yield* Effect.sleep("1 second")
      console.log(s.frames())
      yield* s.drop
      expect(1).toBe(1)
    }))
})
