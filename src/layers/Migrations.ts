/**
 * Forward-only, numbered migrations, run at start-up (and by `npm run cli -- migrate`).
 * Each file under ./migrations is imported here, so the set is fixed at build time.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { PgMigrator } from "@effect/sql-pg"
import { Layer } from "effect"
import { withStartupLock } from "./StartupLock.ts"
import foundation from "./migrations/0001_foundation.ts"
import secretsAndModels from "./migrations/0002_secrets_and_models.ts"
import skills from "./migrations/0003_skills.ts"
import agentConfigs from "./migrations/0004_agent_configs.ts"
import agentsAndTimeline from "./migrations/0005_agents_and_timeline.ts"
import runtimeState from "./migrations/0006_runtime_state.ts"
import turnSteps from "./migrations/0007_turn_steps.ts"
import machines from "./migrations/0008_machines.ts"
import secretKeyCheck from "./migrations/0009_secret_key_check.ts"
import machinePools from "./migrations/0010_machine_pools.ts"
import userSettings from "./migrations/0011_user_settings.ts"
import poolMachines from "./migrations/0012_pool_machines.ts"
import workspaces from "./migrations/0013_workspaces.ts"
import agentQueuedInputs from "./migrations/0014_agent_queued_inputs.ts"
import worktreeMigrationHolds from "./migrations/0015_worktree_migration_holds.ts"
import clusterExitsEffect4 from "./migrations/0016_cluster_exits_effect4.ts"
import accessChangeNotices from "./migrations/0017_access_change_notices.ts"
import browserSessions from "./migrations/0018_browser_sessions.ts"
import worktreesUnplacedWithTheirMachine from "./migrations/0019_worktrees_unplaced_with_their_machine.ts"
import workspacePlacementHolds from "./migrations/0020_workspace_placement_holds.ts"
import poolMachineLocations from "./migrations/0021_pool_machine_locations.ts"

const migrations = {
  "0001_foundation": foundation,
  "0002_secrets_and_models": secretsAndModels,
  "0003_skills": skills,
  "0004_agent_configs": agentConfigs,
  "0005_agents_and_timeline": agentsAndTimeline,
  "0006_runtime_state": runtimeState,
  "0007_turn_steps": turnSteps,
  "0008_machines": machines,
  "0009_secret_key_check": secretKeyCheck,
  "0010_machine_pools": machinePools,
  "0011_user_settings": userSettings,
  "0012_pool_machines": poolMachines,
  "0013_workspaces": workspaces,
  "0014_agent_queued_inputs": agentQueuedInputs,
  "0015_worktree_migration_holds": worktreeMigrationHolds,
  "0016_cluster_exits_effect4": clusterExitsEffect4,
  "0017_access_change_notices": accessChangeNotices,
  "0018_browser_sessions": browserSessions,
  "0019_worktrees_unplaced_with_their_machine": worktreesUnplacedWithTheirMachine,
  "0020_workspace_placement_holds": workspacePlacementHolds,
  "0021_pool_machine_locations": poolMachineLocations
}

/** The id of the newest migration; the database is ready once it has been applied. */
export const LATEST_MIGRATION_ID = Math.max(...Object.keys(migrations).map((name) => Number(name.split("_")[0])))

export const runMigrations = PgMigrator.run({ loader: PgMigrator.fromRecord(migrations) })

/** At start-up, one process at a time (src/layers/StartupLock.ts). */
export const MigrationsLive = Layer.effectDiscard(withStartupLock(runMigrations)).pipe(Layer.provide(NodeServices.layer))
