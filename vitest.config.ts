import { defineConfig } from 'vitest/config';
import { HeavySuitesFirst } from './test/support/heavy-suites-first.js';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // The container tests build images and run one at a time: `npm run test:deploy`.
    exclude: ['test/deploy/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Suites start their own redis-server and child processes; two cores are shared between them, and
    // the suites that start many processes at once never run beside each other (test/support).
    maxWorkers: 2,
    setupFiles: ['test/support/one-heavy-at-a-time.ts'],
    sequence: { sequencer: HeavySuitesFirst },
  },
});
