/**
 * Whether the tests on the real Docker Engine run: when one answers. Without one they are
 * skipped, saying so, so that `npm test` passes on a machine without Docker; with
 * AGENT_PLATFORM_TEST_REQUIRE_DOCKER=1 (.ci/run sets it, having started one) they fail instead.
 */
import { spawnSync } from "node:child_process"

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
