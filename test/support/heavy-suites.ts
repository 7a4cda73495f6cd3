/**
 * Suites that start many processes at once: every benchmark's smoke run, `tributary dev` stacks, a
 * fleet of worker processes, a herd of 40 agents, a real Prometheus whose alerts keep time. Two of them
 * side by side on the reference machine's two cores make each other's agents miss their start and
 * alert deadlines, so no two of them ever run at once (one-heavy-at-a-time.ts); each still runs beside
 * the other suites. With each, about how long it runs alone, in seconds: the order of the run spreads
 * them out by it (heavy-suites-first.ts).
 */
export const HEAVY_SUITES: readonly { path: string; seconds: number }[] = [
  { path: 'test/bench-smoke.e2e.test.ts', seconds: 340 },
  { path: 'apps/worker/test/session-continuity-fleet.e2e.test.ts', seconds: 75 },
  { path: 'test/cli-first-run.e2e.test.ts', seconds: 70 },
  { path: 'test/monitoring/agent-start-outage.e2e.test.ts', seconds: 65 },
  { path: 'apps/worker/test/agent-start-herd.e2e.test.ts', seconds: 35 },
  { path: 'test/dev-exits.e2e.test.ts', seconds: 30 },
  { path: 'test/quickstart.e2e.test.ts', seconds: 15 },
  { path: 'test/monitoring/prometheus-queries.e2e.test.ts', seconds: 15 },
];

/** The heavy suite at `file` (an absolute path or one from the project's root), if it is one. */
export function heavySuite(file: string): (typeof HEAVY_SUITES)[number] | undefined {
  return HEAVY_SUITES.find((suite) => file === suite.path || file.endsWith(`/${suite.path}`));
}
