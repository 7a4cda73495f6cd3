/**
 * The ACP version a test run speaks to the built-in agent: `npm run test:acp-v2` runs suites again with
 * TRIBUTARY_AGENT_ACP_VERSION=2. Fixtures pass it on and prove at the end that it was spoken, so a
 * dropped variable cannot run the v2 suites on v1 without a word.
 */
export function runAcpVersionEnv(): Record<string, string> {
  const version = process.env.TRIBUTARY_AGENT_ACP_VERSION;
  return version ? { TRIBUTARY_AGENT_ACP_VERSION: version } : {};
}

/** Fails when a worker's `agent initialized` log line names another version than the run's. */
export function checkSpokenAcpVersion(logLines: readonly Record<string, unknown>[]): void {
  const expected = Number(process.env.TRIBUTARY_AGENT_ACP_VERSION ?? 1);
  const spoken = logLines
    .filter((line) => line.msg === 'agent initialized')
    .map((line) => line.protocolVersion);
  if (spoken.some((version) => version !== expected)) {
    throw new Error(`agents spoke ACP ${[...new Set(spoken)].join(', ')}, not ${expected}`);
  }
}
