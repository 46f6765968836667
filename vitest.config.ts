import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/perFileDatabase.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A file per core, not vitest's default of one fewer: most files spend their time waiting on
    // the servers, daemons and containers they start (one file at a time on a 2-core machine).
    maxWorkers: availableParallelism()
  }
})
