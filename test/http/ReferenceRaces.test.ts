/**
 * A request racing the deletion of what it refers to: the foreign key that refuses its write is
 * answered as the same request would be a moment later, never `500 internal_error`
 * (docs/api-conventions.md, "A resource deleted meanwhile"). A create whose referenced row is
 * deleted between the service's check and its INSERT is `404 not_found`; a delete that finds the
 * row it deletes referred to by a row written meanwhile is `409 conflict`.
 *
 * How the race is made deterministic, on both databases: a trigger, installed for one test on
 * its database, does the other side's write at the exact point of the race, inside the
 * request's statement (BEFORE INSERT on the referencing table: it deletes the referenced row
 * after the service has found it; BEFORE DELETE on the referenced table: it points a referrer at
 * the row being deleted after the service has found none). The database then refuses the
 * request's write with the very error a concurrent request's committed change gives (SQLSTATE
 * 23503, the same message). Two requests cannot be made to meet there on purpose: the services
 * have no hook between their check and their write, and the embedded database is one
 * connection, on which another request's statements cannot run while a statement waits. One
 * difference from a real race: the trigger's change is part of the request's transaction, so it
 * is rolled back with it; what is left afterwards (the referenced row still there, none of the
 * request's rows) shows that the refused request stored nothing.
 *
 * On Postgres, more tests make the race itself: another transaction holds the grants' table
 * so that the grant's INSERT waits, deletes the secret meanwhile and commits, and the INSERT
 * then meets the deletion, as it does when two requests race; or holds the model grants' table
 * so that an agent config's read of its model's grant waits while the project is deleted; or
 * holds a project's row as its deletion does, so that an agent's launch waits for the deletion.
 *
 * Requests racing the deletion of their project are also sent together, on both databases. Where
 * their statements meet is not chosen, so that test shows a lost race only in some rounds (before
 * its fix, an agent config's create was answered validation_failed in most runs of ten rounds on
 * the embedded database); what it checks holds in every round.
 */
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { literal, rowTrigger } from "../support/DatabaseTriggers.ts"
import { waitedOn } from "../support/HeldAgent.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { describeApp, ID_PATTERN, newUser, sendAs } from "../support/TestApp.ts"

/**
 * `request`'s answer when it meets a deletion: another transaction takes `lock` (a LOCK TABLE
 * statement), sends `request`, waits until the request's statement waits on the lock (`waiting`
 * names that statement), runs `deletion` and commits. The request then goes on as it would after
 * losing the race to a concurrent delete. Postgres only (PGlite runs one statement at a time).
 */
const answerRacingDeletion = <A, E, R>(options: {
  readonly lock: string
  readonly request: Effect.Effect<A, E, R>
  readonly waiting: string
  readonly deletion: Effect.Effect<unknown, unknown>
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const answering = yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql.unsafe(options.lock)
      const answering = yield* Effect.forkChild(options.request)
      yield* waitedOn(sql, options.waiting)
      yield* options.deletion
      return answering
    })).pipe(Effect.orDie)
    return yield* Fiber.join(answering)
  })

const MODEL = {
  provider_model_slug: "claude-sonnet-4-5",
  context_window_tokens: 200_000,
  max_output_tokens: 64_000,
  default_max_output_tokens: 8_000,
  supports_tools: true,
  supports_reasoning: false,
  input_modalities: ["text"],
  output_modalities: ["text"]
} as const

const REFERENCE_GONE = "A resource this request refers to was deleted while the request was handled"

/** An owner, an organization and its model Sonnet (provider config Anthropic), and projects granted it. */
const orgWithModel = Effect.gen(function*() {
  const owner = yield* newUser("owner")
  const org = yield* owner.client.organizations.create({ payload: { name: "Races" } })
  const provider = yield* owner.client.modelProviderConfigs.create({
    params: { orgID: org.id },
    payload: { name: "Anthropic", api_format: "anthropic-messages", base_url: "https://api.anthropic.com/v1" }
  })
  const model = yield* owner.client.models.create({ params: { orgID: org.id }, payload: { ...MODEL, provider_config_id: provider.id, name: "Sonnet" } })
  const grantedProject = (name: string) =>
    Effect.tap(
      owner.client.projects.create({ params: { orgID: org.id }, payload: { name } }),
      (project) => owner.client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
    )
  return { owner, org, grantedProject }
})

/** A source naming orgWithModel's model. */
const SONNET_SOURCE = "instruction: Help.\nmodel: { provider_config: Anthropic, name: Sonnet }\n"

describeApp()("a request racing the deletion of what it refers to", (it) => {
  it.effect("a secret deleted between a grant's check and its insert: 404 not_found, as the grant sent after the delete", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Races" } })
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
      const secret = yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "KEY", value: Redacted.make("sk") } })
      const grants = `/v1/orgs/${org.id}/secrets/${secret.id}/grants`

      yield* rowTrigger(
        "race_secret_grant",
        "BEFORE INSERT",
        "secret_grants",
        `NEW.secret_id = ${literal(secret.id)}`,
        `DELETE FROM secrets WHERE id = NEW.secret_id`
      )
      const raced = yield* sendAs(owner, "POST", grants, { target_project_id: project.id })
      expect(raced.status).toBe(404)
      expect(raced.json).toEqual({ code: "not_found", error: expect.stringContaining(REFERENCE_GONE) })
      expect(raced.json!.error).toContain("check that it still exists")

      // Nothing stored: no grant (the trigger's delete went with the request's rollback).
      const listed = yield* sendAs(owner, "GET", grants)
      expect(listed.status).toBe(200)
      expect(listed.json!.data).toEqual([])

      // The same grant once the delete has really happened: 404 not_found as well.
      expect((yield* sendAs(owner, "DELETE", `/v1/orgs/${org.id}/secrets/${secret.id}`)).status).toBe(204)
      const after = yield* sendAs(owner, "POST", grants, { target_project_id: project.id })
      expect(after.status).toBe(404)
      expect(after.json).toEqual({ code: "not_found", error: `Secret ${secret.id} not found` })
    }))

  it.effect.skipIf(usesEmbeddedDatabase)("on Postgres, a grant whose INSERT waits while another transaction deletes the secret: 404 not_found", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Races" } })
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
      const secret = yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "KEY", value: Redacted.make("sk") } })
      const grants = `/v1/orgs/${org.id}/secrets/${secret.id}/grants`
      const sql = yield* SqlClient.SqlClient
      const raced = yield* answerRacingDeletion({
        // Reads of the table go on; an INSERT into it waits until this transaction ends.
        lock: "LOCK TABLE secret_grants IN SHARE ROW EXCLUSIVE MODE",
        request: sendAs(owner, "POST", grants, { target_project_id: project.id }),
        // The service has found the secret and the project; its INSERT waits.
        waiting: "the grant's INSERT",
        deletion: sql`DELETE FROM secrets WHERE id = ${secret.id}`
      })
      expect(raced.status).toBe(404)
      expect(raced.json).toEqual({ code: "not_found", error: expect.stringContaining(REFERENCE_GONE) })
      expect((yield* sendAs(owner, "GET", `/v1/orgs/${org.id}/secrets/${secret.id}`)).status).toBe(404)
    }))

  it.effect("a model deleted while an agent config naming it is stored: 404, and none of the config's rows is kept", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Races" } })
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
      const provider = yield* owner.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { name: "Anthropic", api_format: "anthropic-messages", base_url: "https://api.anthropic.com/v1" }
      })
      const models = []
      for (const name of ["Sonnet", "Haiku"]) {
        const model = yield* owner.client.models.create({ params: { orgID: org.id }, payload: { ...MODEL, provider_config_id: provider.id, name } })
        yield* owner.client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
        models.push(model)
      }
      const [main, helper] = models
      // The config's row (naming Sonnet) is inserted first, then the rows of the models it uses;
      // Haiku, its subagent's, is deleted as its row goes in.
      yield* rowTrigger(
        "race_agent_config_model",
        "BEFORE INSERT",
        "agent_config_models",
        `NEW.configured_model_id = ${literal(helper.id)}`,
        `DELETE FROM configured_models WHERE id = NEW.configured_model_id`
      )
      const configs = `/v1/orgs/${org.id}/projects/${project.id}/agent-configs`
      const source = [
        "instruction: Help.",
        "model: { provider_config: Anthropic, name: Sonnet }",
        "max_depth: 2",
        "subagents:",
        "  helper:",
        "    description: Helps.",
        "    instruction: Assist.",
        "    model: { provider_config: Anthropic, name: Haiku }",
        ""
      ].join("\n")
      const raced = yield* sendAs(owner, "POST", configs, { source, source_format: "yaml" })
      expect(raced.status).toBe(404)
      expect(raced.json).toEqual({ code: "not_found", error: expect.stringContaining(REFERENCE_GONE) })

      // The transaction rolled back whole: no config, and both models as they were.
      const listed = yield* sendAs(owner, "GET", configs)
      expect(listed.status).toBe(200)
      expect(listed.json!.data).toEqual([])
      for (const model of [main, helper]) {
        expect((yield* sendAs(owner, "GET", `/v1/orgs/${org.id}/models/${model.id}`)).status).toBe(200)
      }
    }))

  it.effect.skipIf(usesEmbeddedDatabase)("on Postgres, an agent config whose model's grant is read while another transaction deletes the project: 404 not_found, not a name that does not resolve", () =>
    Effect.gen(function*() {
      const { grantedProject, org, owner } = yield* orgWithModel
      const project = yield* grantedProject("Main")
      const configs = `/v1/orgs/${org.id}/projects/${project.id}/agent-configs`
      const source = SONNET_SOURCE
      const sql = yield* SqlClient.SqlClient
      const raced = yield* answerRacingDeletion({
        // Even reads of the grants wait until this transaction ends.
        lock: "LOCK TABLE model_grants IN ACCESS EXCLUSIVE MODE",
        request: sendAs(owner, "POST", configs, { source, source_format: "yaml" }),
        // The service has found the project; its read of the model's grant waits.
        waiting: "the read of the model's grant",
        // The project's grants go with it.
        deletion: sql`DELETE FROM projects WHERE id = ${project.id}`
      })
      expect(raced.status).toBe(404)
      expect(raced.json).toEqual({ code: "not_found", error: expect.stringContaining(REFERENCE_GONE) })

      // Sent after the delete, the same request finds no project.
      const after = yield* sendAs(owner, "POST", configs, { source, source_format: "yaml" })
      expect(after.status).toBe(404)
      expect(after.json).toMatchObject({ code: "not_found" })
    }))

  it.effect("agent configs created while their project is deleted, as concurrent requests: each 201 or 404, never a name that does not resolve", () =>
    Effect.gen(function*() {
      const { grantedProject, org, owner } = yield* orgWithModel
      // Several rounds: which statements of the creates run before the delete's varies. A create
      // that reads the project's grants after the deletion took them is the race this is about.
      for (let round = 0; round < 10; round++) {
        const project = yield* grantedProject(`P${round}`)
        const creates = Array.from({ length: 4 }, (_, i) =>
          sendAs(owner, "POST", `/v1/orgs/${org.id}/projects/${project.id}/agent-configs`, {
            source_format: "yaml",
            source: `instruction: i${i}\nmodel: { provider_config: Anthropic, name: Sonnet }\n`
          }))
        const [deleted, ...created] = yield* Effect.all(
          [sendAs(owner, "DELETE", `/v1/orgs/${org.id}/projects/${project.id}`), ...creates],
          { concurrency: "unbounded" }
        )
        expect(deleted.status).toBe(204)
        for (const response of created) {
          if (response.status === 201) continue
          expect(response.status, JSON.stringify(response.json)).toBe(404)
          expect(response.json).toMatchObject({ code: "not_found" })
        }
      }
    }))

  it.effect.skipIf(usesEmbeddedDatabase)("on Postgres, an agent launched while another transaction deletes its project: the launch waits for the deletion, then 404 not_found", () =>
    Effect.gen(function*() {
      const { grantedProject, org, owner } = yield* orgWithModel
      const project = yield* grantedProject("Main")
      const config = yield* owner.client.agentConfigs.create({
        params: { orgID: org.id, projectID: project.id },
        payload: { source_format: "yaml", source: SONNET_SOURCE }
      })
      const agents = `/v1/orgs/${org.id}/projects/${project.id}/agents`
      const sql = yield* SqlClient.SqlClient
      const raced = yield* answerRacingDeletion({
        // What a project's deletion takes first (Projects.remove): the launch's share of the row waits.
        lock: `SELECT id FROM projects WHERE id = ${literal(project.id)} FOR NO KEY UPDATE`,
        request: sendAs(owner, "POST", agents, { agent_config_id: config.id }),
        // The service has checked the caller's access; its share of the project's row waits.
        waiting: "the launch's share of the project's row",
        // The project's configs go with it.
        deletion: sql`DELETE FROM projects WHERE id = ${project.id}`
      })
      expect(raced.status).toBe(404)
      expect(raced.json).toEqual({ code: "not_found", error: `Project ${project.id} not found` })
    }))

  it.effect("a secret that comes to be referred to while it is deleted: 409 conflict, and it is kept", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Races" } })
      const [doomed, other] = [
        yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "OLD_KEY", value: Redacted.make("sk-1") } }),
        yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "NEW_KEY", value: Redacted.make("sk-2") } })
      ]
      const provider = yield* owner.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: {
          name: "Anthropic",
          api_format: "anthropic-messages",
          base_url: "https://api.anthropic.com/v1",
          auth_secret_id: other.id
        }
      })
      expect(provider.id).toMatch(ID_PATTERN("mpc"))
      // The service finds nothing using the secret; then the provider config is pointed at it.
      yield* rowTrigger(
        "race_secret_delete",
        "BEFORE DELETE",
        "secrets",
        `OLD.id = ${literal(doomed.id)}`,
        `UPDATE model_provider_configs SET auth_secret_id = OLD.id WHERE id = ${literal(provider.id)}`
      )
      const raced = yield* sendAs(owner, "DELETE", `/v1/orgs/${org.id}/secrets/${doomed.id}`)
      expect(raced.status).toBe(409)
      expect(raced.json).toEqual({ code: "conflict", error: expect.stringContaining("so it was not deleted") })

      // Rolled back: the secret is there, the provider config as it was.
      expect((yield* sendAs(owner, "GET", `/v1/orgs/${org.id}/secrets/${doomed.id}`)).status).toBe(200)
      const config = yield* sendAs(owner, "GET", `/v1/orgs/${org.id}/model-provider-configs/${provider.id}`)
      expect(config.json).toMatchObject({ auth_secret_id: other.id })
    }))
})
