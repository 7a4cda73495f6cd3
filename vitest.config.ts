import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // The container tests build images and run one at a time: `npm run test:deploy`.
    exclude: ['test/deploy/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Suites start their own redis-server and child processes; two cores are shared between them.
    maxWorkers: 2,
  },
});
