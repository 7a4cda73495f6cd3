import { defineConfig } from 'vitest/config';

/**
 * `npm run test:acp-v2` (docs/adr/0039): the suites whose outcome depends on what the agent speaks, run
 * again with the built-in agent speaking ACP v2 (TRIBUTARY_AGENT_ACP_VERSION=2): the ACP client's own
 * suites, the worker's takeover, continuity, batching and cancel suites, and the stacks end to end.
 */
export default defineConfig({
  test: {
    include: [
      'packages/acp/test/**/*.test.ts',
      'apps/worker/test/session-continuity.e2e.test.ts',
      'apps/worker/test/crash-takeover.e2e.test.ts',
      'apps/worker/test/turn-batching.e2e.test.ts',
      'apps/worker/test/cancel.e2e.test.ts',
      'test/stack/**/*.test.ts',
    ],
    exclude: [
      // What v1 has and v2 folds away or drops: capability flags (v2 folds them into `session`), an
      // agent without close, session modes and the v1 shape of MCP servers, an agent that cannot resume.
      'packages/acp/test/initialize-capabilities.test.ts',
      'packages/acp/test/lru-eviction.test.ts',
      'packages/acp/test/session-setup.test.ts',
      'packages/acp/test/session-continuity-v1.test.ts',
      // Processes, not protocol: process trees, a process per session, warm spares, the start bound,
      // stderr, the environment.
      'packages/acp/test/kill-agent-tree.test.ts',
      'packages/acp/test/tools-end-with-agent.test.ts',
      'packages/acp/test/process-per-session.test.ts',
      'packages/acp/test/warm-spares.test.ts',
      'packages/acp/test/start-concurrency.test.ts',
      'packages/acp/test/stderr-bounded.test.ts',
      'packages/acp/test/env-allowlist.test.ts',
      'packages/acp/test/batched-writer.test.ts',
      // Redis, ingress and platforms, not the agent: a Cluster's failover, the admin API, control
      // commands and their retries, thread parents, files that fail to download or are large.
      'test/stack/cluster.e2e.test.ts',
      'test/stack/admin-api.e2e.test.ts',
      'test/stack/control-commands.e2e.test.ts',
      'test/stack/control-command-retries.e2e.test.ts',
      'test/stack/thread-parent.e2e.test.ts',
      'test/stack/failing-upload.e2e.test.ts',
      'test/stack/large-attachments.e2e.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: 2,
  },
});
