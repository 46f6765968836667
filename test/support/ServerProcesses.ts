/**
 * The set-up of a test file whose servers run as child processes (test/support/Processes.ts):
 * a migrated template data directory copied for each server, the scripted provider on loopback,
 * and, after the file, every server killed, `cleanup` run and the directories removed.
 */
import { afterAll, beforeAll } from "vitest"
import { killLeftoverServers, makeDataDir, makeTemplateDataDir, removeDataDir } from "./Processes.ts"
import { type ScriptedProviderShape, startScriptedProvider } from "./ScriptedProvider.ts"

export const serverProcesses = (timeoutMs: number, cleanup: () => void = () => {}) => {
  let template: string | undefined
  const dataDirs: Array<string> = []
  let started: Awaited<ReturnType<typeof startScriptedProvider>> | undefined

  beforeAll(async () => {
    template = await makeTemplateDataDir()
    dataDirs.push(template)
    started = await startScriptedProvider()
  }, timeoutMs)

  afterAll(async () => {
    killLeftoverServers()
    cleanup()
    dataDirs.forEach(removeDataDir)
    await started?.close()
  })

  return {
    /** The scripted provider (once the file's set-up ran). */
    get provider(): ScriptedProviderShape {
      if (started === undefined) throw new Error("the scripted provider starts in beforeAll")
      return started.provider
    },
    /** A fresh data directory, a copy of the migrated template, removed after the file. */
    dataDir: () => {
      if (template === undefined) throw new Error("the template data directory is made in beforeAll")
      const dir = makeDataDir(template)
      dataDirs.push(dir)
      return dir
    }
  }
}
