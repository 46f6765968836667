/**
 * The world the fuzz test runs in: two organizations built the same realistic way (a project and
 * a second one, a secret with a grant, a provider config at the scripted provider and a model
 * granted to the project, a skill with two versions and a grant, an agent config, an actor, an
 * agent with a finished turn, an agent whose custom tool call waits for its result with an input
 * queued behind it, an artifact, an agent waiting on an approval, an invitation, spare API keys).
 *
 * Callers: organization A's owner, a member of A without any project membership (read access),
 * organization B's admin API key, and B's owner. Each tenant lists its ids by prefix (`pools`,
 * for references in bodies) and in coherent `bundles` (for paths that name a resource that
 * exists). Neither holds what would take a caller away (the callers' own API keys, the reader's
 * user id), so that a fuzzed DELETE or PATCH cannot turn one caller into another halfway through.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { Client } from "../../src/api/Client.ts"
import type { AgentId, OrgId } from "../../src/domain/shared/Ids.ts"
import { eventually } from "../support/Polling.ts"
import { agentSource, scriptedModel } from "../support/ScriptedModel.ts"
import { Reply, type ScriptedProviderShape } from "../support/ScriptedProvider.ts"
import { joinOrganization, newUser, type TestUser } from "../support/TestApp.ts"

export interface Tenant {
  readonly orgId: OrgId
  /** Ids by prefix (`proj` -> [...]); `version` holds the skill's version numbers. */
  readonly pools: Readonly<Record<string, ReadonlyArray<string>>>
  /**
   * Ids that belong together, one per prefix (the project of the agent, the agent of the tool
   * call, ...), so a path built from one bundle names a resource that exists.
   */
  readonly bundles: ReadonlyArray<Readonly<Record<string, string>>>
}

export type CallerName = "owner" | "member" | "otherTenantKey" | "otherTenantOwner"

export interface Caller {
  readonly name: CallerName
  readonly token: string
  /** The organization whose resources are the caller's own. */
  readonly tenant: Tenant
}

export interface FuzzWorld {
  readonly tenantA: Tenant
  readonly tenantB: Tenant
  readonly callers: Readonly<Record<CallerName, Caller>>
  /** The scripted provider's base URL (openai-responses), for provider configs the fuzz test creates. */
  readonly providerUrl: string
}

const text = (value: string) => [{ type: "text" as const, text: value }]

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex").toString("base64")

/**
 * One organization with a resource of every kind. `reader` joins as a member (and is named by no
 * id); `bystander` joins as a member that fuzzed requests may name (promote, remove, add to projects).
 */
const buildTenant = (
  owner: TestUser,
  provider: ScriptedProviderShape,
  label: string,
  members: { readonly reader?: TestUser; readonly bystander?: TestUser } = {}
) =>
  Effect.gen(function*() {
    const client: Client = owner.client
    const slug = `fuzz-${randomBytes(5).toString("hex")}`
    const org = yield* client.organizations.create({ payload: { name: label } })
    const orgID = org.id
    for (const user of [members.reader, members.bystander]) {
      if (user !== undefined) yield* joinOrganization(owner, orgID, user, "member")
    }
    const project = yield* client.projects.create({ params: { orgID }, payload: { name: "Main" } })
    const other = yield* client.projects.create({ params: { orgID }, payload: { name: "Other" } })
    const projectPath = { orgID, projectID: project.id }
    const { model, provider: providerConfig, secret } = yield* scriptedModel(client, orgID, {
      format: "openai-responses",
      baseUrl: provider.baseUrl("openai-responses"),
      slug
    })
    const modelGrant = yield* client.models.createGrant({ params: { orgID, modelID: model.id }, payload: { target_project_id: project.id } })
    const secretGrant = yield* client.secrets.createGrant({
      params: { orgID, secretID: secret.id },
      payload: { target_project_id: project.id }
    })
    const skill = yield* client.skills.create({
      params: { orgID },
      payload: { name: "Fuzzing", description: "A skill", owner_project_id: project.id, content: { "SKILL.md": "# Fuzzing\nBe thorough." } }
    })
    yield* client.skills.createVersion({ params: { orgID, skillID: skill.id }, payload: { content: { "SKILL.md": "# Fuzzing\nv2" } } })
    const skillGrant = yield* client.skills.createGrant({ params: { orgID, skillID: skill.id }, payload: { target_project_id: other.id } })
    const config = yield* client.agentConfigs.create({
      params: projectPath,
      payload: { source: agentSource({ label }), source_format: "yaml" }
    })
    const actor = yield* client.actors.create({ params: projectPath, payload: { external_id: "fuzz-actor", display_name: "Fuzz" } })
    const launch = () => client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } })
    const agentPath = (agentID: AgentId) => ({ ...projectPath, agentID })

    // An agent with a finished turn whose input carried an image (an artifact).
    const finished = yield* launch()
    yield* provider.script([Reply.text("Hello")], { model: slug })
    yield* client.agents.sendInput({
      params: agentPath(finished.id),
      payload: { content_blocks: [...text("Look"), { type: "media", media_type: "image/png", data: PNG }], actor_id: actor.id }
    })
    yield* eventually(client.agents.get({ params: agentPath(finished.id) }), (agent) => agent.status === "idle", "the first turn")
    const events = yield* client.agents.listEvents({ params: agentPath(finished.id), query: {} })
    const artifacts = events.data.flatMap((event) =>
      "content_blocks" in event ? event.content_blocks.flatMap((block) => block.type === "media_ref" ? [block.artifact_id] : []) : []
    )

    // An agent whose custom tool call waits for its result, with a second input queued behind it.
    const waiting = yield* launch()
    yield* provider.script([Reply.toolCall("lookup", { query: "status" })], { model: slug })
    yield* client.agents.sendInput({ params: agentPath(waiting.id), payload: { content_blocks: text("Look it up") } })
    const [toolCall] = (yield* eventually(
      client.toolCalls.list({ params: agentPath(waiting.id), query: {} }),
      (page) => page.data.some((call) => call.state === "ready"),
      "a ready tool call"
    )).data
    const queued = yield* client.agents.sendInput({ params: agentPath(waiting.id), payload: { content_blocks: text("Then this") } })

    // An agent waiting on an approval.
    const approving = yield* launch()
    yield* provider.script([Reply.toolCall("deploy", { env: "prod" })], { model: slug })
    yield* client.agents.sendInput({ params: agentPath(approving.id), payload: { content_blocks: text("Deploy") } })
    const [interaction] = (yield* eventually(
      client.interactions.listForAgent({ params: agentPath(approving.id), query: {} }),
      (page) => page.data.length > 0,
      "an approval"
    )).data

    const [finishedTurns, waitingTurns, approvingTurns] = yield* Effect.forEach([finished, waiting, approving], (agent) =>
      client.agents.listTurns({ params: agentPath(agent.id), query: {} }).pipe(Effect.map((page) => page.data.map((turn) => turn.id))))
    const spareOrgKey = yield* client.organizationApiKeys.create({ params: { orgID }, payload: { name: "Spare", role: "member" } })
    const sparePersonalKey = yield* client.user.createApiKey({ payload: { name: "Spare" } })
    const invitation = yield* client.invitations.create({
      params: { orgID },
      payload: { email: `invitee-${randomBytes(4).toString("hex")}@example.test`, role: "member" }
    })
    const users = [owner.user.id, ...(members.bystander === undefined ? [] : [members.bystander.user.id])]
    const shared = {
      org: orgID,
      proj: project.id,
      sec: secret.id,
      secgrant: secretGrant.id,
      mpc: providerConfig.id,
      mdl: model.id,
      mdlgrant: modelGrant.id,
      skl: skill.id,
      sklgrant: skillGrant.id,
      acfg: config.id,
      act: actor.id,
      oinv: invitation.id
    }
    const tenant: Tenant = {
      orgId: orgID,
      pools: {
        org: [orgID],
        proj: [project.id, other.id],
        sec: [secret.id],
        secgrant: [secretGrant.id],
        mpc: [providerConfig.id],
        mdl: [model.id],
        mdlgrant: [modelGrant.id],
        skl: [skill.id],
        sklgrant: [skillGrant.id],
        version: ["1", "2"],
        acfg: [config.id],
        act: [actor.id],
        agt: [finished.id, waiting.id, approving.id],
        turn: [...finishedTurns, ...waitingTurns, ...approvingTurns],
        inp: [queued.event.agent_input_id],
        tcl: [toolCall.id],
        intr: [interaction.id],
        art: artifacts,
        oinv: [invitation.id],
        key: [spareOrgKey.id, sparePersonalKey.id],
        usr: users
      },
      bundles: [
        { ...shared, agt: finished.id, turn: finishedTurns[0], art: artifacts[0], version: "1", key: spareOrgKey.id, usr: users[users.length - 1] },
        { ...shared, agt: waiting.id, turn: waitingTurns[0], tcl: toolCall.id, inp: queued.event.agent_input_id, version: "2", key: sparePersonalKey.id, usr: users[0] },
        { ...shared, agt: approving.id, turn: approvingTurns[0], intr: interaction.id, version: "2", key: spareOrgKey.id, usr: users[0] }
      ]
    }
    return tenant
  })

/** Both tenants and the four callers. */
export const buildWorld = (provider: ScriptedProviderShape) =>
  Effect.gen(function*() {
    const ownerA = yield* newUser("fuzz-owner")
    const member = yield* newUser("fuzz-member")
    const bystander = yield* newUser("fuzz-bystander")
    const ownerB = yield* newUser("fuzz-other")
    const tenantA = yield* buildTenant(ownerA, provider, "Tenant A", { reader: member, bystander })
    const tenantB = yield* buildTenant(ownerB, provider, "Tenant B")
    const keyB = yield* ownerB.client.organizationApiKeys.create({
      params: { orgID: tenantB.orgId },
      payload: { name: "Admin", role: "admin" }
    })
    // Turns started by the fuzz test's inputs end at once.
    yield* provider.answerByDefault(Reply.text("ok"))
    const world: FuzzWorld = {
      tenantA,
      tenantB,
      providerUrl: provider.baseUrl("openai-responses"),
      callers: {
        owner: { name: "owner", token: ownerA.token, tenant: tenantA },
        member: { name: "member", token: member.token, tenant: tenantA },
        otherTenantKey: { name: "otherTenantKey", token: keyB.token, tenant: tenantB },
        otherTenantOwner: { name: "otherTenantOwner", token: ownerB.token, tenant: tenantB }
      }
    }
    return world
  })
