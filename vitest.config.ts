import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starting anvil and servers costs a little; two cores: keep the pool small.
    pool: "forks",
    maxWorkers: 2,
    env: { LOG_LEVEL: "silent" },
  },
});
