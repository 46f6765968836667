/**
 * The machines capability (docs/machines.md, docs/machine-pools.md): daemon tokens, machines,
 * machine pools and the machines they start, their files, the machine WebSocket's sessions, and
 * the sweep of requests to offline machines. Results of tool calls resolve turns' waits, so it runs over the workflow engine.
 */
import { Layer } from "effect"
import { WorkflowEngineLive } from "../../layers/WorkflowEngine.ts"
import { DaemonTokens } from "./DaemonTokens.ts"
import { MachineFiles } from "./MachineFiles.ts"
import { MachinePools } from "./MachinePools.ts"
import { Machines } from "./Machines.ts"
import { MachineSessions } from "./MachineSessions.ts"
import { MachineSweeperLive } from "./MachineSweeper.ts"
import { PoolMachines } from "./PoolMachines.ts"
import { PoolSchedulerLive } from "./PoolScheduler.ts"

export const MachinesLive = Layer.mergeAll(
  DaemonTokens.layer,
  Machines.layer,
  MachinePools.layer,
  MachineFiles.layer,
  MachineSessions.layer,
  MachineSweeperLive,
  PoolMachines.layer,
  PoolSchedulerLive
).pipe(Layer.provideMerge(WorkflowEngineLive))
