import { defineConfig } from 'vitest/config';

/**
 * Suites that start many processes at once: every benchmark's smoke run, `tributary dev` stacks,
 * fleets of worker processes, a herd of 40 agents, a real Prometheus whose alerts keep time. Two of
 * them side by side on the reference machine's two cores make each other's agents miss their start
 * and alert deadlines, so they run one at a time, after the rest (which run two at a time).
 */
const ALONE = [
  'test/bench-smoke.e2e.test.ts',
  'test/cli-first-run.e2e.test.ts',
  'test/dev-exits.e2e.test.ts',
  'test/quickstart.e2e.test.ts',
  'test/monitoring/**/*.test.ts',
  'apps/worker/test/agent-start-herd.e2e.test.ts',
  'apps/worker/test/session-continuity-fleet.e2e.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'together',
          include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          // The container tests build images and run one at a time: `npm run test:deploy`.
          exclude: ['test/deploy/**', '**/node_modules/**', ...ALONE],
          // Suites start their own redis-server and child processes; two cores are shared between them.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
