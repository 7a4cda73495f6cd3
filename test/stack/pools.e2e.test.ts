import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shownText, waitFor } from '@tributary/testkit';
import type { RunningWorker } from '@tributary/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, replaceFile, type Stack, startStack } from './stack-fixture.js';

/**
 * Two routes on two pools, each pool's workers running the built-in agent in a configuration of its
 * own (its replies start with the pool's mark); everything else stays on the default pool.
 */
const ROUTES = `
profiles:
  alpha: {pool: alpha}
  beta: {pool: beta}
  gamma: {pool: gamma}
routes:
  - {name: alpha, platform: telegram, channel: "-8301", profile: alpha}
  - {name: beta, platform: telegram, channel: "-8302", profile: beta}
  - {name: gamma, platform: telegram, channel: "-8309", profile: gamma}
`;

let stack: Stack;
let dir: string;
let file: string;
const workers: Record<string, RunningWorker> = {};
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-pools-'));
  file = join(dir, 'routes.yaml');
  await writeFile(file, ROUTES);
  stack = await startStack({ ROUTES_FILE: file, ROUTES_RELOAD_MS: '200' });
  for (const pool of ['alpha', 'beta']) {
    workers[pool] = await stack.addWorker(
      { WORKER_POOL: pool },
      { TRIBUTARY_AGENT_DEFAULTS: JSON.stringify({ preamble: `[${pool}] ` }) },
    );
  }
});
afterAll(async () => {
  await stack.close();
  await rm(dir, { recursive: true, force: true });
});

let ids = 0;
const say = (chatId: number, text: string) => postTelegramMessage(stack, chatId, 80_000 + ++ids, text);
const shown = (chatId: number) =>
  stack
    .calls('telegram', 'sendMessage')
    .filter((call) => (call.body as { chat_id: number }).chat_id === chatId)
    .map((call) => shownText(call) ?? '');

/** The worker that answered the thread's last turn, from its session record. */
async function answeredBy(chatId: number): Promise<string | undefined> {
  return (await stack.worker.queue.admin.report(`telegram:${chatId}:main`))?.session?.worker;
}

async function replies(chatId: number, count: number): Promise<string[]> {
  await waitFor(() => shown(chatId).length >= count, {
    what: () => `${count} replies in chat ${chatId}; it shows ${JSON.stringify(shown(chatId))}`,
  });
  return shown(chatId);
}

async function ingressMetric(series: string): Promise<number | undefined> {
  const metrics = await (await fetch(`${stack.ingress.adminUrl}/metrics`)).text();
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('worker pools', () => {
  it("offers a route's threads only to its pool's workers", async () => {
    for (let round = 0; round < 3; round++) {
      await say(-8301, `@tributary_bot alpha ${round}`);
      await say(-8302, `@tributary_bot beta ${round}`);
      await say(-8303, `@tributary_bot default ${round}`);
      await replies(-8301, round + 1);
      await replies(-8302, round + 1);
      await replies(-8303, round + 1);
    }
    expect(shown(-8301).every((text) => text.startsWith('[alpha] '))).toBe(true);
    expect(shown(-8302).every((text) => text.startsWith('[beta] '))).toBe(true);
    expect(shown(-8303).some((text) => text.startsWith('['))).toBe(false);
    expect(await answeredBy(-8301)).toBe(workers.alpha!.owner);
    expect(await answeredBy(-8302)).toBe(workers.beta!.owner);
    expect(await answeredBy(-8303)).toBe(stack.worker.owner);
    // Each pool's workers and threads, from any process's fleet gauges.
    expect(await ingressMetric('tributary_pool_workers{pool="alpha"}')).toBe(1);
    expect(await ingressMetric('tributary_pool_workers{pool="default"}')).toBe(1);
  });

  it('takes a route added while threads run, without a restart, and moves no running thread', async () => {
    await say(-8301, '@tributary_bot a long one\n@agent {"delayMs": 5000}');
    await waitFor(
      async () => (await stack.worker.queue.admin.state('telegram:-8301:main')).status === 'running',
      {
        what: 'the alpha turn running',
      },
    );
    // The new table sends the running alpha chat to the beta pool, and a new chat too: the new chat
    // takes it, the alpha thread keeps the route it started with.
    await replaceFile(
      file,
      ROUTES.replace(
        'routes:\n',
        'routes:\n  - {name: moved, platform: telegram, channel: "-8301", profile: beta}\n  - {name: added, platform: telegram, channel: "-8305", profile: beta}\n',
      ),
    );
    await waitFor(
      async () =>
        /tributary_route_table_reloads_total\{result="applied"\} 1/.test(
          await stack.ingressMetrics.registry.metrics(),
        ),
      { what: 'the reload' },
    );
    await say(-8305, '@tributary_bot new here');
    const before = shown(-8301).length;
    await say(-8301, '@tributary_bot and after the reload');
    expect((await replies(-8305, 1))[0]).toMatch(/^\[beta\] /);
    const alpha = await replies(-8301, before + 2);
    expect(alpha.slice(before).every((text) => text.startsWith('[alpha] '))).toBe(true);
    expect(await answeredBy(-8301)).toBe(workers.alpha!.owner);
  });

  it('tells a thread whose pool has no worker, counts it, and serves it once one starts', async () => {
    expect((await say(-8309, '@tributary_bot anyone?')).body).toMatchObject({ outcome: 'accepted' });
    await waitFor(() => shown(-8309).some((text) => text.includes('pool "gamma"') && text.includes('kept')), {
      what: 'the notice that no worker serves the pool',
    });
    expect(stack.warnings().map((line) => line.msg)).toContain(
      'message accepted for a worker pool with no worker taking turns; it waits, kept, until one starts (WORKER_POOL)',
    );
    expect(await ingressMetric('tributary_pool_unserved_messages_total{pool="gamma"}')).toBe(1);
    expect(await ingressMetric('tributary_pool_workers{pool="gamma"}')).toBe(0);
    expect(await ingressMetric('tributary_pool_threads_runnable{pool="gamma"}')).toBe(1);
    // Told once, however many messages wait.
    await say(-8309, '@tributary_bot still there?');
    await waitFor(
      async () => (await ingressMetric('tributary_pool_unserved_messages_total{pool="gamma"}')) === 2,
      {
        what: 'the second message seen unserved',
      },
    );
    expect(shown(-8309).filter((text) => text.includes('pool "gamma"'))).toHaveLength(1);

    const gamma = await stack.addWorker(
      { WORKER_POOL: 'gamma' },
      { TRIBUTARY_AGENT_DEFAULTS: '{"preamble": "[gamma] "}' },
    );
    await waitFor(() => shown(-8309).some((text) => text.startsWith('[gamma] ')), {
      what: 'the answer once a gamma worker runs',
      timeoutMs: 20_000,
    });
    expect(await answeredBy(-8309)).toBe(gamma.owner);
  });
});
