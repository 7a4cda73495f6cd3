// An agent that cannot start for a minute, then can, on a real stack scraped by a real Prometheus
// evaluating the real alert rules: nothing is set aside, each waiting thread hears once that its
// agent is slow to start, the alert fires and clears, and every message is answered afterwards.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtInAgentCommand } from '@tributary/agent';
import { waitFor } from '@tributary/testkit';
import { afterAll, expect, it } from 'vitest';
import { postGatewayMessage, type Stack, startStack } from '../stack/stack-fixture.js';
import { type PrometheusServer, startPrometheus } from './prometheus-server.js';

const METRICS_TOKEN = 'agent-start-outage-metrics-token';
const OUTAGE_MS = 60_000;
const FIRING = 'ALERTS{alertname="TributaryAgentStartsFailing", alertstate="firing"}';
const SLOW_START = 'The agent is taking longer than usual to start';

let dir: string | undefined;
let stack: Stack | undefined;
let prometheus: PrometheusServer | undefined;

afterAll(async () => {
  await stack?.close();
  await prometheus?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The built-in agent behind a wrapper that exits at once, as a broken install does, while `flag` exists. */
async function agentBrokenWhile(flag: string): Promise<string> {
  const { command, args } = builtInAgentCommand();
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const script = join(dir!, 'agent.sh');
  await writeFile(
    script,
    [
      '#!/bin/sh',
      `if [ -e ${quote(flag)} ]; then echo 'agent: its runtime is not installed yet' >&2; exit 3; fi`,
      `exec ${[command, ...args].map(quote).join(' ')}`,
      '',
    ].join('\n'),
  );
  await chmod(script, 0o755);
  return script;
}

const gatewayReplies = (thread: string) =>
  stack!
    .calls('gateway', 'reply')
    .map((call) => call.body as { channel: { thread_id: string }; content: { text: string } })
    .filter((reply) => reply.channel.thread_id === thread)
    .map((reply) => reply.content.text);

it('waits out an agent that cannot start for a minute: one notice, the alert fires and clears, all answered', {
  timeout: 300_000,
}, async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-agent-outage-'));
  const flag = join(dir, 'broken');
  await writeFile(flag, '');
  const outageStarted = performance.now();
  stack = await startStack({ METRICS_TOKEN, AGENT_COMMAND: await agentBrokenWhile(flag) });
  prometheus = await startPrometheus([
    {
      job: 'tributary-worker',
      targets: [new URL(stack.worker.healthUrl).host],
      labels: { namespace: 'tributary' },
      bearerToken: METRICS_TOKEN,
    },
  ]);

  expect((await postGatewayMessage(stack, 1, 'a', 'first on a')).body).toMatchObject({ outcome: 'accepted' });
  expect((await postGatewayMessage(stack, 2, 'b', 'first on b')).body).toMatchObject({ outcome: 'accepted' });
  await waitFor(async () => (await prometheus!.query(FIRING)).length === 1, {
    what: 'the agent-start alert to fire',
    timeoutMs: OUTAGE_MS,
  });
  // Sent while the agent cannot start: it waits behind the batch put back on its thread.
  expect((await postGatewayMessage(stack, 3, 'a', 'second on a')).body).toMatchObject({
    outcome: 'accepted',
  });
  // The default AGENT_SLOW_START_NOTICE_MS (30 s) has passed for both threads before the agent works.
  await waitFor(() => gatewayReplies('a').length === 1 && gatewayReplies('b').length === 1, {
    what: () => `the slow-start notices (a: ${gatewayReplies('a')}, b: ${gatewayReplies('b')})`,
    timeoutMs: OUTAGE_MS,
  });

  await waitFor(() => performance.now() - outageStarted >= OUTAGE_MS, {
    what: 'the end of the outage',
    timeoutMs: OUTAGE_MS,
  });
  await rm(flag);
  const answered = (thread: string, text: string) =>
    gatewayReplies(thread).some((reply) => reply.includes(text) && !reply.includes(SLOW_START));
  await waitFor(
    () => answered('a', 'first on a') && answered('a', 'second on a') && answered('b', 'first on b'),
    {
      what: () => `every message answered (a: ${gatewayReplies('a')}; b: ${gatewayReplies('b')})`,
      timeoutMs: 120_000,
    },
  );
  await waitFor(async () => (await prometheus!.query(FIRING)).length === 0, {
    what: 'the agent-start alert to clear',
    timeoutMs: 30_000,
  });

  // One notice per waiting thread, in plain words, and none after.
  for (const thread of ['a', 'b']) {
    const notices = gatewayReplies(thread).filter((reply) => reply.includes(SLOW_START));
    expect(notices, thread).toHaveLength(1);
    expect(notices[0]).toContain('there is no need to resend them');
  }
  // Nothing set aside; the operator saw why, at warn and above, and in the metrics.
  const metric = async (name: string) =>
    (await stack!.workerMetrics.registry.getSingleMetric(name)?.get())?.values[0]?.value;
  expect(await stack.worker.queue.admin.deadLetters('gateway:cli:stack:a')).toEqual([]);
  expect(await stack.worker.queue.admin.deadLetters('gateway:cli:stack:b')).toEqual([]);
  expect(await metric('tributary_dead_lettered_batches_total')).toBe(0);
  expect(await metric('tributary_agent_start_failures_total')).toBeGreaterThanOrEqual(3);
  expect(await metric('tributary_agent_starts_failing')).toBe(0);
  const warnings = stack.warnings().map((entry) => entry.msg);
  expect(warnings).toContain('agent did not start');
  expect(warnings).toContain('the turn could not start; its batch is put back, not counted as failed');
  expect(
    warnings.some((msg) =>
      String(msg).startsWith('the agent cannot start; this worker takes no new threads'),
    ),
  ).toBe(true);
});
