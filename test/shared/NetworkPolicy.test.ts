/**
 * The connection-time half of AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS: the socket `lookup` every
 * model call uses when blocking refuses a name resolving to a private address, on a real
 * connection through node:http (the way the model client's agent uses it). The configured-URL and
 * call-time halves are tested through the API in test/configuration/PrivateNetworkTargets.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, createServer, get } from "node:http"
import type { AddressInfo } from "node:net"
import { NetworkPolicy } from "../../src/services/shared/NetworkPolicy.ts"
import { testConfig } from "../support/TestApp.ts"

const policy = (blockPrivateNetworks: boolean) =>
  Effect.provide(NetworkPolicy, NetworkPolicy.layer).pipe(
    Effect.provide(testConfig({ blockPrivateNetworks }))
  )

/** GET http://localhost:<port>/ through an agent using `lookup`: the body, or the error's code and message. */
const fetchLocal = (lookup: typeof NetworkPolicy.Service["lookup"]) =>
  Effect.callback<{ body?: string; code?: string; message?: string }>((resume) => {
    const server = createServer((_, response) => response.end("reached")).listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const agent = new Agent(lookup === undefined ? {} : { lookup })
      get({ host: "localhost", port, agent }, (response) => {
        let body = ""
        response.on("data", (chunk) => (body += chunk))
        response.on("end", () => {
          server.close()
          resume(Effect.succeed({ body }))
        })
      }).on("error", (error: NodeJS.ErrnoException) => {
        server.close()
        resume(Effect.succeed({ code: error.code, message: error.message }))
      })
    })
  })

describe("NetworkPolicy", () => {
  it.live("blocking: a connection to a name resolving to loopback is refused as it connects", () =>
    Effect.gen(function*() {
      const blocking = yield* policy(true)
      expect(blocking.blocking).toBe(true)
      const refused = yield* fetchLocal(blocking.lookup)
      expect(refused.body).toBeUndefined()
      expect(refused.code).toBe("EPRIVATETARGET")
      expect(refused.message).toContain("localhost resolves to 127.0.0.1, a loopback address")
      expect(blocking.literalProblem("http://[::ffff:169.254.169.254]/")).toContain("link-local")
      expect(blocking.literalProblem("http://localhost/")).toBeUndefined()
    }))

  it.live("not blocking (the default): the same connection is made, nothing is refused", () =>
    Effect.gen(function*() {
      const open = yield* policy(false)
      expect(open.lookup).toBeUndefined()
      expect(yield* fetchLocal(open.lookup)).toEqual({ body: "reached" })
      expect(open.literalProblem("http://169.254.169.254/")).toBeUndefined()
      yield* open.checkTarget("http://127.0.0.1:5432/")
    }))
})
