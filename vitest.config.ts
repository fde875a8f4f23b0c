import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Worker pools (piscina) and mmaps live in the test process; forks isolate them per file.
    pool: 'forks',
  },
});
