/**
 * The agents API without running a turn: launching, listing and reading agents, actors, the
 * checks an input passes before it reaches the engine (references, size limits), access and
 * tenant isolation. Flows that need the engine are in AgentRuntimeApi.test.ts.
 */
import { HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { ActorId, AgentConfigId, ToolCallId } from "../../src/domain/shared/Ids.ts"
import { agentProject } from "../support/AgentProject.ts"
import { agentSource } from "../support/ScriptedModel.ts"
import { declareBody } from "../support/RawHttp.ts"
import { describeApp, expectFailure, ID_PATTERN, joinOrganization, newId, newUser, rawRequest } from "../support/TestApp.ts"

const MiB = 1024 * 1024

/** Base64 of `bytes` bytes. */
const media = (bytes: number, media_type = "application/octet-stream") => ({
  type: "media" as const,
  media_type,
  data: Buffer.alloc(bytes, 7).toString("base64")
})

const artifactCount = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ count: string }>`SELECT count(*) FROM artifacts`).pipe(
  Effect.map((rows) => Number(rows[0].count)),
  Effect.orDie
)

describeApp()("agents", (it) => {
  it.effect("launch: 201 with an idle agent; get; list paginated and filtered by status; /api/v1 too", () =>
    Effect.gen(function*() {
      const { config, launch, org, owner, project, projectPath } = yield* agentProject()
      const [agent, response] = yield* owner.client.agents.create({
        params: projectPath,
        payload: { agent_config_id: config.id, name: "Support", metadata: { team: "blue" } },
        responseMode: "decoded-and-response"
      })
      expect(response.status).toBe(201)
      expect(agent.id).toMatch(ID_PATTERN("agt"))
      expect(agent).toMatchObject({
        org_id: org.id,
        project_id: project.id,
        agent_config_id: config.id,
        name: "Support",
        metadata: { team: "blue" },
        status: "idle",
        current_turn_id: null
      })
      expect(agent.input).toBeUndefined()
      const second = yield* launch()
      expect(second).toMatchObject({ name: null, metadata: {} })

      const got = yield* owner.client.agents.get({ params: { ...projectPath, agentID: agent.id } })
      expect(got.id).toBe(agent.id)

      const first = yield* owner.client.agents.list({ params: projectPath, query: { limit: 1 } })
      expect(first.data.map((a) => a.id)).toEqual([agent.id])
      expect(first.has_more).toBe(true)
      const rest = yield* owner.client.agents.list({
        params: projectPath,
        query: { limit: 1, cursor: first.next_cursor! }
      })
      expect(rest.data.map((a) => a.id)).toEqual([second.id])
      expect(rest.has_more).toBe(false)
      const idle = yield* owner.client.agents.list({ params: projectPath, query: { status: "idle" } })
      expect(idle.data.map((a) => a.id)).toEqual([agent.id, second.id])
      const running = yield* owner.client.agents.list({ params: projectPath, query: { status: "running" } })
      expect(running.data).toEqual([])
      // A cursor is bound to the filter it was made for: another filter starts again without one.
      const firstIdle = yield* owner.client.agents.list({ params: projectPath, query: { status: "idle", limit: 1 } })
      const restIdle = yield* owner.client.agents.list({
        params: projectPath,
        query: { status: "idle", limit: 1, cursor: firstIdle.next_cursor! }
      })
      expect(restIdle.data.map((a) => a.id)).toEqual([second.id])
      for (const [status, cursor] of [["idle", first.next_cursor!], [undefined, firstIdle.next_cursor!]] as const) {
        const refused = yield* expectFailure(owner.client.agents.list({ params: projectPath, query: { status, cursor } }))
        expect(refused).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/cursor" }] })
      }

      const raw = yield* rawRequest(
        HttpClientRequest.get(`/api/v1/orgs/${org.id}/projects/${project.id}/agents/${agent.id}`).pipe(
          HttpClientRequest.bearerToken(owner.token)
        )
      )
      expect(raw.status).toBe(200)
      expect(raw.json).toMatchObject({ id: agent.id, status: "idle" })
      const badStatus = yield* rawRequest(
        HttpClientRequest.get(`/v1/orgs/${org.id}/projects/${project.id}/agents?status=sleeping`).pipe(
          HttpClientRequest.bearerToken(owner.token)
        )
      )
      expect(badStatus.status).toBe(400)
      expect(badStatus.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/status" }] })
    }))

  it.effect("launch: an agent's name follows the rules of names (NFC, 1 to 64 characters, no edge whitespace or invisible characters)", () =>
    Effect.gen(function*() {
      const { config, org, owner, project } = yield* agentProject()
      const launchNamed = (name: string) =>
        rawRequest(
          HttpClientRequest.post(`/v1/orgs/${org.id}/projects/${project.id}/agents`).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyJsonUnsafe({ agent_config_id: config.id, name })
          )
        )
      for (const refused of [" padded ", "a\u0007b", "a\u200bb", "", "x".repeat(65)]) {
        const response = yield* launchNamed(refused)
        expect({ refused, status: response.status }).toEqual({ refused, status: 400 })
        expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/name" }] })
      }
      // 64 characters, each two UTF-16 code units; a decomposed accent is stored composed.
      const emoji = "\u{1F600}".repeat(64)
      expect((yield* launchNamed(emoji)).json).toMatchObject({ name: emoji })
      expect((yield* launchNamed("Cafe\u0301")).json).toMatchObject({ name: "Caf\u00e9" })
    }))

  it.effect("a config on the owner's personal machine: only its owner launches agents from it or sends them inputs", () =>
    Effect.gen(function*() {
      const { org, owner, project, projectPath } = yield* agentProject({ label: "Personal" })
      const registered = yield* owner.client.machineRegistration.register({
        payload: {
          machine_name: "owners-laptop",
          hostname: "laptop",
          platform: "linux",
          architecture: "x86_64",
          daemon_version: "1.0.0",
          directories: ["/tmp"]
        }
      })
      const config = yield* owner.client.agentConfigs.create({
        params: projectPath,
        payload: {
          source_format: "yaml",
          source: agentSource({
            label: "Personal",
            extraSource: ["machine_sources:", `  - machine_id: ${registered.machine.id}`, "    cwd: /tmp"]
          })
        }
      })
      const agent = yield* owner.client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } })
      const colleague = yield* newUser("colleague")
      yield* joinOrganization(owner, org.id, colleague, "admin")
      const launched = yield* expectFailure(
        colleague.client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } })
      )
      expect(launched).toMatchObject({ _tag: "Forbidden", error: expect.stringContaining("owners-laptop") })
      const input = yield* expectFailure(colleague.client.agents.sendInput({
        params: { ...projectPath, agentID: agent.id },
        payload: { content_blocks: [{ type: "text", text: "run whoami" }] }
      }))
      expect(input).toMatchObject({ _tag: "Forbidden", error: expect.stringContaining("personal machine") })
      // The colleague's own agents on the project's other configs are theirs to use.
      const shared = yield* owner.client.agentConfigs.create({
        params: projectPath,
        payload: { source_format: "yaml", source: agentSource({ label: "Shared" }) }
      })
      expect((yield* colleague.client.agents.create({ params: projectPath, payload: { agent_config_id: shared.id } })).project_id)
        .toBe(project.id)
      // The owner still sends inputs (the turn fails later: the scripted provider is not listening here).
      const accepted = yield* owner.client.agents.sendInput({
        params: { ...projectPath, agentID: agent.id },
        payload: { content_blocks: [{ type: "text", text: "hello" }] }
      })
      expect(accepted.disposition).toBe("started")
    }))

  it.effect("a config that uses its author's personal secret: only the author launches agents from it or sends them inputs", () =>
    Effect.gen(function*() {
      const { org, owner, projectPath } = yield* agentProject({ label: "PersonalSecret" })
      const orgPath = { orgID: org.id }
      const personal = yield* owner.client.secrets.create({
        params: orgPath,
        payload: { name: "owners-token", value: Redacted.make("owners-value"), owner: "personal" }
      })
      const shared = yield* owner.client.secrets.create({ params: orgPath, payload: { name: "team-token", value: Redacted.make("team-value") } })
      yield* owner.client.secrets.createGrant({ params: { ...orgPath, secretID: shared.id }, payload: { target_project_id: projectPath.projectID } })
      const configUsing = (label: string, secret: string) =>
        owner.client.agentConfigs.create({
          params: projectPath,
          payload: { source_format: "yaml", source: agentSource({ label, extraSource: ["git_credentials:", `  token_secret: ${secret}`] }) }
        })
      const config = yield* configUsing("Personal", "owners-token")
      const agent = yield* owner.client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } })
      const colleague = yield* newUser("secret-colleague")
      yield* joinOrganization(owner, org.id, colleague, "admin")
      const launched = yield* expectFailure(
        colleague.client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } })
      )
      expect(launched).toMatchObject({
        _tag: "Forbidden",
        error: expect.stringContaining(`the personal secret owners-token (${personal.id})`)
      })
      const input = yield* expectFailure(colleague.client.agents.sendInput({
        params: { ...projectPath, agentID: agent.id },
        payload: { content_blocks: [{ type: "text", text: "push it" }] }
      }))
      expect(input).toMatchObject({ _tag: "Forbidden", error: expect.stringContaining("only their owner may") })
      // The same config with the organization's secret granted to the project is anyone's to use.
      const teamConfig = yield* configUsing("Team", "team-token")
      const teamAgent = yield* colleague.client.agents.create({ params: projectPath, payload: { agent_config_id: teamConfig.id } })
      expect(teamAgent.agent_config_id).toBe(teamConfig.id)
      const accepted = yield* owner.client.agents.sendInput({
        params: { ...projectPath, agentID: agent.id },
        payload: { content_blocks: [{ type: "text", text: "push it" }] }
      })
      expect(accepted.disposition).toBe("started")
    }))

  it.effect("launch with an input makes both or neither: an input that cannot be recorded leaves no agent", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { config, owner, projectPath } = yield* agentProject({ label: "Atomic" })
      // The input's insert fails, as a crash between the agent and its input would cut it short.
      yield* sql`
        CREATE FUNCTION refuse_input_6210() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'no inputs today';
        END $$`
      yield* sql`CREATE TRIGGER refuse_input_6210 BEFORE INSERT ON agent_inputs FOR EACH ROW EXECUTE FUNCTION refuse_input_6210()`
      const launched = yield* expectFailure(owner.client.agents.create({
        params: projectPath,
        payload: { agent_config_id: config.id, name: "half", input: { content_blocks: [{ type: "text", text: "hello" }] } }
      }))
      expect(launched).toMatchObject({ _tag: "InternalError" })
      yield* sql`DROP FUNCTION refuse_input_6210() CASCADE`
      expect((yield* owner.client.agents.list({ params: projectPath, query: {} })).data).toEqual([])
      const agentRows = yield* sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM agents WHERE name = 'half'`
      expect(agentRows[0].count).toBe(0)
    }))

  it.effect("launch: a config that is not the project's is invalid_request naming agent_config_id", () =>
    Effect.gen(function*() {
      const { config, otherProject, org, owner, projectPath } = yield* agentProject()
      const unknown = yield* expectFailure(
        owner.client.agents.create({ params: projectPath, payload: { agent_config_id: yield* newId(AgentConfigId) } })
      )
      expect(unknown).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/agent_config_id" }] })
      // The config exists, in another project of the same organization.
      const elsewhere = yield* expectFailure(
        owner.client.agents.create({
          params: { orgID: org.id, projectID: otherProject.id },
          payload: { agent_config_id: config.id }
        })
      )
      expect(elsewhere).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/agent_config_id" }] })
      const malformed = yield* rawRequest(
        HttpClientRequest.post(`/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`).pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ agent_config_id: "acfg_nope" })
        )
      )
      expect(malformed.status).toBe(400)
      expect(malformed.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/agent_config_id" }] })
      expect((yield* owner.client.agents.list({ params: projectPath, query: {} })).data).toEqual([])
    }))

  it.effect("tenant isolation: another organization's agents are not found on every route", () =>
    Effect.gen(function*() {
      const { launch, otherProject, org, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const stranger = yield* newUser("stranger")
      const agentPath = { ...projectPath, agentID: agent.id }
      const attempts = [
        stranger.client.agents.get({ params: agentPath }),
        stranger.client.agents.list({ params: projectPath, query: {} }),
        stranger.client.agents.listEvents({ params: agentPath, query: {} }),
        stranger.client.agents.listBacklog({ params: agentPath, query: {} }),
        stranger.client.agents.listTurns({ params: agentPath, query: {} }),
        stranger.client.toolCalls.list({ params: agentPath, query: {} }),
        stranger.client.interactions.listForAgent({ params: agentPath, query: {} }),
        stranger.client.interactions.list({ params: projectPath, query: { status: "pending" } }),
        stranger.client.actors.list({ params: projectPath, query: {} }),
        stranger.client.agents.sendInput({ params: agentPath, payload: { content_blocks: [{ type: "text", text: "hi" }] } }),
        stranger.client.agents.control({ params: agentPath, payload: { control_type: "cancel_current" } })
      ] as const
      for (const attempt of attempts) {
        expect((yield* expectFailure(attempt as Effect.Effect<unknown, { _tag: string }>))._tag).toBe("NotFound")
      }
      // The owner's own agent through another of its projects is not found either.
      const crossed = yield* expectFailure(
        owner.client.agents.get({ params: { orgID: org.id, projectID: otherProject.id, agentID: agent.id } })
      )
      expect(crossed._tag).toBe("NotFound")
      // Inputs through the other project, with a key, with media or without: not found, nothing stored.
      const crossedPath = { orgID: org.id, projectID: otherProject.id, agentID: agent.id }
      const artifactsBefore = yield* artifactCount
      for (const content_blocks of [[{ type: "text" as const, text: "hi" }], [media(10)]]) {
        const sent = yield* expectFailure(
          owner.client.agents.sendInput({ params: crossedPath, payload: { content_blocks, input_idempotency_key: "k" } })
        )
        expect(sent._tag).toBe("NotFound")
      }
      expect(yield* artifactCount).toBe(artifactsBefore)
      expect((yield* owner.client.agents.listTurns({ params: agentPath, query: {} })).data).toHaveLength(0)
      const stream = yield* rawRequest(
        HttpClientRequest.get(`/v1/orgs/${org.id}/projects/${otherProject.id}/agents/${agent.id}/events/stream`).pipe(
          HttpClientRequest.bearerToken(owner.token)
        )
      )
      expect(stream.status).toBe(404)
      expect(stream.json).toMatchObject({ code: "not_found" })
    }))

  it.effect("a member without project membership reads agents but may not act on them (403); made a project member, it may", () =>
    Effect.gen(function*() {
      const { launch, org, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const reader = yield* newUser("reader")
      yield* joinOrganization(owner, org.id, reader, "member")
      const agentPath = { ...projectPath, agentID: agent.id }
      expect((yield* reader.client.agents.get({ params: agentPath })).id).toBe(agent.id)
      const denied = [
        reader.client.agents.sendInput({ params: agentPath, payload: { content_blocks: [{ type: "text", text: "hi" }] } }),
        reader.client.agents.control({ params: agentPath, payload: { control_type: "cancel_current" } }),
        reader.client.actors.create({ params: projectPath, payload: { external_id: "u1" } })
      ] as const
      for (const attempt of denied) {
        expect((yield* expectFailure(attempt as Effect.Effect<unknown, { _tag: string }>))._tag).toBe("Forbidden")
      }
      yield* owner.client.projectMembers.add({ params: projectPath, payload: { user_id: reader.user.id } })
      const [actor, created] = yield* reader.client.actors.create({
        params: projectPath,
        payload: { external_id: "u1" },
        responseMode: "decoded-and-response"
      })
      expect(created.status).toBe(201)
      expect(actor.external_id).toBe("u1")
    }))

  it.effect("actors: 201, the same external_id again is 200 with the same actor; list; project-scoped", () =>
    Effect.gen(function*() {
      const { org, otherProject, owner, projectPath } = yield* agentProject()
      const [actor, created] = yield* owner.client.actors.create({
        params: projectPath,
        payload: { external_id: "customer-42", display_name: "Ada" },
        responseMode: "decoded-and-response"
      })
      expect(created.status).toBe(201)
      expect(actor.id).toMatch(ID_PATTERN("act"))
      expect(actor).toMatchObject({ external_id: "customer-42", display_name: "Ada", project_id: projectPath.projectID })
      const [again, found] = yield* owner.client.actors.create({
        params: projectPath,
        payload: { external_id: "customer-42", display_name: "Someone else" },
        responseMode: "decoded-and-response"
      })
      expect(found.status).toBe(200)
      expect(again).toEqual(actor)
      const other = yield* owner.client.actors.create({ params: projectPath, payload: { external_id: "customer-43" } })
      expect(other.display_name).toBeNull()
      const page = yield* owner.client.actors.list({ params: projectPath, query: {} })
      expect(page.data.map((a) => a.id)).toEqual([actor.id, other.id])
      // The same external id in another project is another actor.
      const elsewhere = yield* owner.client.actors.create({
        params: { orgID: org.id, projectID: otherProject.id },
        payload: { external_id: "customer-42" }
      })
      expect(elsewhere.id).not.toBe(actor.id)
      const empty = yield* rawRequest(
        HttpClientRequest.post(`/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/actors`).pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ external_id: "" })
        )
      )
      expect(empty.status).toBe(400)
      expect(empty.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/external_id" }] })
    }))

  it.effect("inputs: an actor_id that is not an actor of the project is invalid_request; nothing recorded", () =>
    Effect.gen(function*() {
      const { launch, org, otherProject, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const foreign = yield* owner.client.actors.create({
        params: { orgID: org.id, projectID: otherProject.id },
        payload: { external_id: "x" }
      })
      for (const actor_id of [foreign.id, yield* newId(ActorId)]) {
        const error = yield* expectFailure(
          owner.client.agents.sendInput({
            params: agentPath,
            payload: { content_blocks: [{ type: "text", text: "hi" }], actor_id }
          })
        )
        expect(error).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/actor_id" }] })
      }
      const launched = yield* expectFailure(
        owner.client.agents.create({
          params: projectPath,
          payload: {
            agent_config_id: agent.agent_config_id,
            input: { content_blocks: [{ type: "text", text: "hi" }], actor_id: foreign.id }
          }
        })
      )
      expect(launched).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/input/actor_id" }] })
      const events = yield* owner.client.agents.listEvents({ params: agentPath, query: {} })
      expect(events.data).toEqual([])
      // The failed launch made no agent.
      expect((yield* owner.client.agents.list({ params: projectPath, query: {} })).data.map((a) => a.id)).toEqual([
        agent.id
      ])
    }))

  it.effect("an input of empty text blocks only is refused at content_blocks; empty text beside content is kept", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const base = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      // Raw requests: the typed client checks its payload before sending and would refuse these itself.
      const post = (path: string, body: unknown) =>
        rawRequest(
          HttpClientRequest.post(path).pipe(HttpClientRequest.bearerToken(owner.token), HttpClientRequest.bodyJsonUnsafe(body))
        )
      const empty = { type: "text", text: "" }
      for (const content_blocks of [[empty], [empty, { type: "text", text: " \n\t" }]]) {
        const refused = yield* post(`${base}/${agent.id}/inputs`, { content_blocks })
        expect(refused.status).toBe(400)
        expect(refused.json).toMatchObject({
          code: "invalid_request",
          issues: [{ path: "/content_blocks", message: expect.stringContaining("empty text") }]
        })
      }
      const launched = yield* post(base, { agent_config_id: agent.agent_config_id, input: { content_blocks: [empty] } })
      expect(launched.status).toBe(400)
      expect(launched.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/input/content_blocks" }] })
      expect((yield* owner.client.agents.listEvents({ params: agentPath, query: {} })).data).toEqual([])
      expect((yield* owner.client.agents.list({ params: projectPath, query: {} })).data).toHaveLength(1)

      const accepted = yield* owner.client.agents.sendInput({
        params: agentPath,
        payload: { content_blocks: [{ type: "text", text: "" }, { type: "text", text: "hi" }] }
      })
      expect(accepted.event.event_kind).toBe("agent_input")
    }))

  it.effect("inputs: every size limit answers before anything is stored", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const before = yield* artifactCount
      const send = (content_blocks: ReadonlyArray<ReturnType<typeof media> | { type: "text"; text: string }>) =>
        expectFailure(owner.client.agents.sendInput({ params: agentPath, payload: { content_blocks } }))

      const tooMany = yield* send(Array.from({ length: 21 }, () => media(10)))
      expect(tooMany).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/content_blocks" }] })
      const bigBlock = yield* send([media(10 * MiB + 1)])
      expect(bigBlock._tag).toBe("RequestTooLarge")
      expect((bigBlock as { error: string }).error).toContain("/content_blocks/0")
      const bigTotal = yield* send([media(9 * MiB), media(9 * MiB), media(7 * MiB)])
      expect(bigTotal._tag).toBe("RequestTooLarge")
      expect((bigTotal as { error: string }).error).toContain("media")
      const bigText = yield* send([{ type: "text", text: "x".repeat(MiB) }])
      expect(bigText._tag).toBe("RequestTooLarge")
      expect((bigText as { error: string }).error).toContain("non-media")
      const notBase64 = yield* send([{ type: "media", media_type: "image/png", data: "not base64!" }])
      expect(notBase64).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/content_blocks/0/data" }] })
      const noBlocks = yield* rawRequest(
        HttpClientRequest.post(
          `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/inputs`
        ).pipe(HttpClientRequest.bearerToken(owner.token), HttpClientRequest.bodyJsonUnsafe({ content_blocks: [] }))
      )
      expect(noBlocks.status).toBe(400)
      expect(noBlocks.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/content_blocks" }] })

      expect(yield* artifactCount).toBe(before)
      expect((yield* owner.client.agents.listEvents({ params: agentPath, query: {} })).data).toEqual([])
      expect((yield* owner.client.agents.listBacklog({ params: agentPath, query: {} })).data).toEqual([])
    }), { timeout: 60_000 })

  it.effect("free-form metadata is at most 64 keys and 16 KiB as compact JSON: launch, inputs (text and media), tool results", () =>
    Effect.gen(function*() {
      const { config, launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const base = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents`
      const post = (path: string, body: unknown) =>
        rawRequest(HttpClientRequest.post(path).pipe(HttpClientRequest.bearerToken(owner.token), HttpClientRequest.bodyJsonUnsafe(body)))
      const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]))
      // {"v":"…"} is 8 bytes around the value; "é" is 2 bytes of UTF-8.
      const ofBytes = (bytes: number) => ({ v: "é".repeat((bytes - 8) / 2) })
      // 50,000 keys (0.7 MB; past 1 MiB, the rest of a launch is refused as it streams in: BodyGuard's
      // tests) at launch; on blocks, the 65th key (a media block's metadata is not in the 1 MiB budget
      // of non-media blocks).
      const [wide, over] = [keys(50_000), keys(65)]
      const cases: ReadonlyArray<readonly [string, unknown, string]> = [
        [base, { agent_config_id: config.id, metadata: wide }, "/metadata"],
        [`${base}/${agent.id}/inputs`, { content_blocks: [{ type: "text", text: "hi", metadata: over }] }, "/content_blocks/0/metadata"],
        [
          `${base}/${agent.id}/tool-calls/tcl_${"a".repeat(26)}/result`,
          { outcome: "succeeded", content_blocks: [{ ...media(10), metadata: over }] },
          "/content_blocks/0/metadata"
        ],
        [
          base,
          { agent_config_id: config.id, input: { content_blocks: [{ ...media(10), metadata: over }] } },
          "/input/content_blocks/0/metadata"
        ]
      ]
      for (const [path, body, pointer] of cases) {
        const response = yield* post(path, body)
        expect(response.status).toBe(400)
        expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path: pointer, message: "must have at most 64 keys" }] })
      }
      const tooLarge = yield* post(base, { agent_config_id: config.id, metadata: ofBytes(16 * 1024 + 2) })
      expect(tooLarge.status).toBe(400)
      expect(tooLarge.json).toMatchObject({
        code: "invalid_request",
        issues: [{ path: "/metadata", message: "must be at most 16384 bytes as compact JSON (got 16386)" }]
      })
      expect((yield* owner.client.agents.list({ params: projectPath, query: {} })).data).toHaveLength(1)
      expect((yield* owner.client.agents.listEvents({ params: agentPath, query: {} })).data).toEqual([])

      // At the limits: 64 keys, 16 KiB.
      const most = yield* owner.client.agents.create({ params: projectPath, payload: { agent_config_id: config.id, metadata: keys(64) } })
      expect(Object.keys(most.metadata)).toHaveLength(64)
      const largest = yield* owner.client.agents.create({
        params: projectPath,
        payload: { agent_config_id: config.id, metadata: ofBytes(16 * 1024) }
      })
      expect(largest.metadata).toEqual(ofBytes(16 * 1024))
      const accepted = yield* owner.client.agents.sendInput({
        params: agentPath,
        payload: { content_blocks: [{ type: "text", text: "hi", metadata: ofBytes(16 * 1024) }] }
      })
      expect(accepted.event.content_blocks).toEqual([{ type: "text", text: "hi", metadata: ofBytes(16 * 1024) }])
    }), { timeout: 60_000 })

  it.effect("a body over 48 MiB is refused from its Content-Length; other routes keep the 1 MiB cap", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const base = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}`
      const declare = (path: string, length: number) => declareBody(path, owner.token, length)
      const overall = yield* declare(`${base}/agents/${agent.id}/inputs`, 48 * MiB + 1)
      expect(overall.status).toBe(413)
      expect(overall.json).toMatchObject({ code: "request_too_large" })
      const launchTooLarge = yield* declare(`${base}/agents`, 48 * MiB + 1)
      expect(launchTooLarge.status).toBe(413)
      const actors = yield* declare(`${base}/actors`, MiB + 1)
      expect(actors.status).toBe(413)
      // Under 48 MiB the inputs route reads the body (and refuses it for its content, not its size).
      const accepted = yield* rawRequest(
        HttpClientRequest.post(`${base}/agents/${agent.id}/inputs`).pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ content_blocks: [{ type: "text", text: "x".repeat(2 * MiB) }] })
        )
      )
      expect(accepted.status).toBe(413)
      expect(String(accepted.json?.error)).toContain("non-media")
    }))

  it.effect("unknown agents, turns, tool calls, interactions and artifacts are 404", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const base = `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}`
      for (
        const path of [
          `${base}/agents/agt_${"a".repeat(26)}`,
          `${base}/agents/${agent.id}/turns/turn_${"a".repeat(26)}`,
          `${base}/agents/${agent.id}/tool-calls/tcl_${"a".repeat(26)}`,
          `${base}/agents/${agent.id}/artifacts/art_${"a".repeat(26)}`
        ]
      ) {
        const response = yield* rawRequest(HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(owner.token)))
        expect(response.status).toBe(404)
        expect(response.json).toMatchObject({ code: "not_found" })
      }
      const resolve = yield* rawRequest(
        HttpClientRequest.post(`${base}/interactions/intr_${"a".repeat(26)}/resolve`).pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ decision: "approve" })
        )
      )
      expect(resolve.status).toBe(404)
      const result = yield* expectFailure(
        owner.client.toolCalls.submitResult({
          params: { ...agentPath, toolCallID: yield* newId(ToolCallId) },
          payload: { outcome: "succeeded", content_blocks: [] }
        })
      )
      expect(result._tag).toBe("NotFound")
    }))

  it.effect("the OpenAPI document lists the routes, the event stream as text/event-stream", () =>
    Effect.gen(function*() {
      const response = yield* rawRequest(HttpClientRequest.get("/v1/openapi.json"))
      const paths = (response.json as { paths: Record<string, any> }).paths
      const stream = paths["/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/events/stream"]
      expect(Object.keys(stream.get.responses["200"].content)).toEqual(["text/event-stream"])
      for (
        const path of [
          "/v1/orgs/{orgID}/projects/{projectID}/agents",
          "/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs",
          "/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/backlog/{inputID}",
          "/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/tool-calls/{toolCallID}/result",
          "/v1/orgs/{orgID}/projects/{projectID}/interactions/{interactionID}/resolve",
          "/v1/orgs/{orgID}/projects/{projectID}/actors"
        ]
      ) expect(paths[path]).toBeDefined()
    }))
})
