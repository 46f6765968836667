/**
 * The tests on the real Docker Engine. They run when one answers; without one they are skipped,
 * saying so, so that `npm test` passes on a machine without Docker; with
 * AGENT_PLATFORM_TEST_REQUIRE_DOCKER=1 (.ci/run sets it, having started one) they fail instead.
 */
import { spawnSync } from "node:child_process"
import { afterAll, beforeAll } from "vitest"
import { POOL_LABEL } from "../../src/services/machines/providers/DockerProvider.ts"
import { ensureDockerImage } from "./DockerImage.ts"

export const dockerEngineAnswers = (): boolean => {
  const version = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8" })
  if (version.status === 0) return true
  const why = (version.stderr ?? "").trim() || String(version.error ?? "docker exited with an error")
  if (process.env.AGENT_PLATFORM_TEST_REQUIRE_DOCKER === "1") {
    throw new Error(`These tests need a running Docker Engine (AGENT_PLATFORM_TEST_REQUIRE_DOCKER=1): ${why}`)
  }
  console.warn(`Skipping the Docker Engine tests: no Docker Engine answers (${why}). Start one to run them (.ci/run shows how).`)
  return false
}

/**
 * Within a describe of such tests: the test image made before them, and the containers of the
 * pools added to the set returned removed after them, whatever happened.
 */
export const dockerPoolsRemovedAfter = (): Set<string> => {
  const pools = new Set<string>()
  beforeAll(() => ensureDockerImage(), 300_000)
  afterAll(() => {
    for (const pool of pools) {
      const ids = spawnSync("docker", ["ps", "-aq", "--filter", `label=${POOL_LABEL}=${pool}`], { encoding: "utf8" })
        .stdout.split("\n").filter((id) => id !== "")
      if (ids.length > 0) spawnSync("docker", ["rm", "-f", "-v", ...ids], { stdio: "ignore" })
    }
  })
  return pools
}
