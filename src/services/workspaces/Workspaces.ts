/**
 * Workspaces (docs/workspaces.md): a person's own (personal API key only; another user's is
 * 404), in a project of an organization they belong to. Creating one makes its main worktree.
 * The default machine must be one the user may use in the project (their personal machine, or an
 * organization machine granted to the project); the pool one of the organization. A person has at
 * most MAX_WORKSPACES_PER_USER.
 */
import { Array as Arr, Context, Effect, Layer } from "effect"
import { Conflict, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import {
  type MachineId,
  type MachinePoolId,
  type OrgId,
  type ProjectId,
  UserMachinePathId,
  type UserId,
  WorkspaceId,
  type WorktreeId,
  WorktreeId as WorktreeIdSchema
} from "../../domain/shared/Ids.ts"
import type { CreateWorkspace, UpdateWorkspace } from "../../domain/workspaces/Workspaces.ts"
import { MachinePoolsRepository } from "../machines/MachinePoolsRepository.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import { PoolMachines } from "../machines/PoolMachines.ts"
import { someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { withinOwnerLimit } from "../shared/OwnerLimits.ts"
import type { RowLock } from "../shared/Sql.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { UsersRepository } from "../tenancy/UsersRepository.ts"
import { type StoredWorkspace, toWorkspace, WorkspacesRepository } from "./WorkspacesRepository.ts"
import { toDescriptor, WorktreesRepository } from "./WorktreesRepository.ts"

/**
 * The most workspaces one person may have. The list is not paginated (a person has a few), and
 * nothing bounded it: 20,000 made in a minute with one key made each list 6.7 MB and 2 s.
 */
export const MAX_WORKSPACES_PER_USER = 1000

const make = Effect.gen(function*() {
  const workspaces = yield* WorkspacesRepository
  const users = yield* UsersRepository
  const worktrees = yield* WorktreesRepository
  const machines = yield* MachinesRepository
  const pools = yield* MachinePoolsRepository
  const access = yield* Access
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions
  const poolMachines = yield* PoolMachines

  /** Whether the caller is still a member of the workspace's organization with access to its project. */
  const inItsProject = (workspace: StoredWorkspace) => Effect.isSuccess(access.projectAccess(workspace.org_id, workspace.project_id))

  /** The caller's workspace (another user's is not found), with the caller still in its project. */
  const own = (workspaceId: WorkspaceId, lock: RowLock = "none") =>
    Effect.gen(function*() {
      const notFound = () => new NotFound({ error: `Workspace ${workspaceId} not found` })
      const userId = yield* access.requireUser
      const workspace = yield* workspaces.find(userId, workspaceId, lock).pipe(someOrFail(notFound))
      if (!(yield* inItsProject(workspace))) return yield* Effect.fail(notFound())
      return { userId, workspace }
    })

  /** Fails unless the user may use the machine in the project. */
  const usableMachine = (orgId: OrgId, projectId: ProjectId, userId: UserId, machineId: MachineId, field: string) =>
    Effect.flatMap(machines.usableAmong(orgId, projectId, userId, [machineId]), (usable) =>
      usable.has(machineId) ? Effect.void : Effect.fail(
        new InvalidRequest({
          error: `${field.slice(1)}: machine ${machineId} is not a machine you may use in project ${projectId} ` +
            "(your personal machine in the organization, or an organization machine granted to the project)",
          issues: [{ path: field, message: "is not a machine you may use in the project" }]
        })
      ))

  const poolOfOrg = (orgId: OrgId, poolId: MachinePoolId) =>
    Effect.flatMap(pools.inOrg(orgId, [poolId]), (found) =>
      found.has(poolId) ? Effect.void : Effect.fail(
        new InvalidRequest({
          error: `machine_pool_id: ${poolId} is not a machine pool of organization ${orgId}`,
          issues: [{ path: "/machine_pool_id", message: "is not a machine pool of the organization" }]
        })
      ))

  /** Creates the workspace and its main worktree; `conflict` when the user has MAX_WORKSPACES_PER_USER. */
  const create = (input: CreateWorkspace) =>
    Effect.gen(function*() {
      const userId = yield* access.requireUser
      yield* access.requireProjectAccess(input.org_id, input.project_id, "write")
      const defaultMachine = input.default_machine_id ?? null
      const pool = input.machine_pool_id ?? null
      if (defaultMachine !== null) {
        yield* usableMachine(input.org_id, input.project_id, userId, defaultMachine, "/default_machine_id")
      }
      if (pool !== null) yield* poolOfOrg(input.org_id, pool)
      const id = yield* ids.make(WorkspaceId)
      const worktreeId = yield* ids.make(WorktreeIdSchema)
      const pathId = yield* ids.make(UserMachinePathId)
      return yield* transaction(withinOwnerLimit({
        lockOwner: users.lock(userId),
        count: workspaces.count(userId),
        max: MAX_WORKSPACES_PER_USER,
        refusal: (count) =>
          new Conflict({
            error: `You have ${count} workspaces, the most one person may have; delete one you no longer use to make another`
          })
      }, Effect.gen(function*() {
        const stored = yield* workspaces.insert({
          id,
          user_id: userId,
          org_id: input.org_id,
          project_id: input.project_id,
          name: input.name,
          repository_url: input.repository.url ?? null,
          base_ref: input.repository.base_ref ?? null,
          default_machine_id: defaultMachine,
          machine_pool_id: pool,
          sync_enabled: input.sync_enabled ?? false
        })
        yield* worktrees.insert({
          id: worktreeId,
          workspace_id: id,
          is_main: true,
          name: null,
          worktree_type: defaultMachine === null ? null : "LOCAL",
          user_machine_path_id: defaultMachine === null ? null : pathId,
          machine_id: defaultMachine
        }).pipe(Effect.orDie)
        return toWorkspace(stored)
      })))
    })

  /** The caller's workspaces in the projects they still have access to (as `own` finds them). */
  const list = Effect.gen(function*() {
    const userId = yield* access.requireUser
    return (yield* Effect.filter(yield* workspaces.list(userId), inItsProject)).map(toWorkspace)
  })

  const get = (workspaceId: WorkspaceId) => Effect.map(own(workspaceId), ({ workspace }) => toWorkspace(workspace))

  const update = (workspaceId: WorkspaceId, input: UpdateWorkspace) =>
    transaction(Effect.gen(function*() {
      const { userId, workspace } = yield* own(workspaceId, "update")
      yield* access.requireProjectAccess(workspace.org_id, workspace.project_id, "write")
      const defaultMachine = input.default_machine_id === undefined ? workspace.default_machine_id : input.default_machine_id
      if (defaultMachine !== null && defaultMachine !== workspace.default_machine_id) {
        yield* usableMachine(workspace.org_id, workspace.project_id, userId, defaultMachine, "/default_machine_id")
      }
      const pool = input.machine_pool_id === undefined ? workspace.machine_pool_id : input.machine_pool_id
      if (pool !== null && pool !== workspace.machine_pool_id) yield* poolOfOrg(workspace.org_id, pool)
      const updated = yield* workspaces.update(workspaceId, {
        name: input.name ?? workspace.name,
        repository_url: input.repository?.url === undefined ? workspace.repository_url : input.repository.url,
        base_ref: input.repository?.base_ref === undefined ? workspace.base_ref : input.repository.base_ref,
        default_machine_id: defaultMachine,
        machine_pool_id: pool,
        sync_enabled: input.sync_enabled ?? workspace.sync_enabled
      })
      return toWorkspace(updated)
    }))

  /**
   * The workspace, its worktrees, sessions and checkpoints; the sessions' agents stay in the
   * project. The sandboxes of its REMOTE worktrees go with it: marked `deleting` in the same
   * transaction (they hold nothing else, and their pool counted them until stopped), then stopped.
   */
  const remove = (workspaceId: WorkspaceId) =>
    Effect.gen(function*() {
      const sandboxes = yield* transaction(Effect.gen(function*() {
        const { workspace } = yield* own(workspaceId, "update")
        yield* access.requireProjectAccess(workspace.org_id, workspace.project_id, "write")
        const remote = (yield* worktrees.ofWorkspace(workspaceId)).flatMap((worktree) =>
          worktree.worktree_type === "REMOTE" && worktree.managed_machine_id !== null ? [worktree.managed_machine_id] : []
        )
        const marked = yield* Effect.forEach(remote, (machineId) =>
          poolMachines.markReleased(machineId, `workspace ${workspaceId} was deleted`))
        yield* workspaces.remove(workspaceId)
        return Arr.getSomes(marked)
      }))
      yield* Effect.forEach(sandboxes, poolMachines.destroy, { discard: true })
    })

  const listWorktrees = (workspaceId: WorkspaceId) =>
    Effect.gen(function*() {
      yield* own(workspaceId)
      return (yield* worktrees.ofWorkspace(workspaceId)).map(toDescriptor)
    })

  /** A worktree of one of the caller's workspaces, with its workspace; an organization API key is forbidden. */
  const ownWorktree = (worktreeId: WorktreeId) =>
    Effect.gen(function*() {
      yield* access.requireUser
      const notFound = () => new NotFound({ error: `Worktree ${worktreeId} not found` })
      const worktree = yield* worktrees.find(worktreeId).pipe(someOrFail(notFound))
      const { userId, workspace } = yield* own(worktree.workspace_id).pipe(Effect.mapError(notFound))
      return { userId, workspace, worktree }
    })

  return { create, list, get, update, remove, listWorktrees, own, ownWorktree, usableMachine } as const
})

export class Workspaces extends Context.Service<Workspaces, Effect.Success<typeof make>>()("Workspaces") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      WorkspacesRepository.layer,
      UsersRepository.layer,
      WorktreesRepository.layer,
      MachinesRepository.layer,
      MachinePoolsRepository.layer,
      Access.layer,
      IdGenerator.layer,
      Transactions.layer,
      PoolMachines.layer
    ])
  )
}

export type { StoredWorkspace }
