import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@tributary/queue';
import { shownText, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, type Stack, startStack } from './stack-fixture.js';

const bin = fileURLToPath(new URL('../../apps/cli/bin/tributary.js', import.meta.url));
const ACT = 'usage-admin-act-token-0123456789';

/** Chat -8201 is the `support` route, allowed one token a day: its first turn spends it. */
const ROUTES = `
profiles:
  plain: {}
routes:
  - {name: support, platform: telegram, channel: "-8201", profile: plain, dailyTokenBudget: 1}
  - {name: frontend, platform: telegram, channel: "-8202", profile: plain, maxConcurrentTurns: 4, dispatchWeight: 3}
`;

let stack: Stack;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-usage-'));
  const file = join(dir, 'routes.yaml');
  await writeFile(file, ROUTES);
  stack = await startStack(
    { ROUTES_FILE: file, ROUTES_RELOAD_MS: '200', ADMIN_TOKENS: `ops:act:${ACT}` },
    undefined,
    // The built-in agent reports usage with each turn, as the published agents do.
    { TRIBUTARY_AGENT_DEFAULTS: JSON.stringify({ usage: true }) },
  );
});
afterAll(async () => {
  await stack.close();
  await rm(dir, { recursive: true, force: true });
});

function admin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, 'admin', ...args],
      { env: { ...process.env, TRIBUTARY_ADMIN_URL: stack.ingress.adminUrl, TRIBUTARY_ADMIN_TOKEN: ACT } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

const shown = (chatId: number) =>
  stack
    .calls('telegram', 'sendMessage')
    .filter((call) => (call.body as { chat_id: number }).chat_id === chatId)
    .map((call) => shownText(call) ?? '');

/** The worker's /metrics, as Prometheus scrapes it. */
async function workerMetrics(): Promise<string> {
  return (await fetch(`${stack.worker.healthUrl}/metrics`)).text();
}

function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

let ids = 0;

describe('the route table, published for the workers', () => {
  it("gives them each route's budget, turn limit and dispatch weight, which they never read from the file", async () => {
    const store = Store.open({
      url: stack.redisUrl,
      connection: { kind: 'patient' },
      queue: { prefix: stack.prefix },
    });
    try {
      await waitFor(async () => Object.keys(await store.turnLimits.limits()).length > 0, {
        what: 'the limits',
      });
      expect(await store.turnLimits.limits()).toEqual({ frontend: 4 });
      expect(await store.routeLines.weights()).toEqual({ frontend: 3 });
      expect(await store.usage.budgets()).toEqual({ support: { tokens: 1, source: 'file' } });
    } finally {
      await store.close();
    }
  });
});

describe('usage per route', () => {
  it("counts each route's tokens and cost in /metrics, the batch record and the CLI", async () => {
    await postTelegramMessage(stack, -8202, 70_000 + ++ids, '@tributary_bot how much does this cost?');
    await postTelegramMessage(stack, -8203, 70_000 + ++ids, '@tributary_bot and this one?');
    await waitFor(() => shown(-8202).length > 0 && shown(-8203).length > 0, { what: 'both replies' });

    let metrics = '';
    await waitFor(
      async () => {
        metrics = await workerMetrics();
        return sample(metrics, 'tributary_route_tokens_total{route="default"}') !== undefined;
      },
      { what: 'usage in /metrics' },
    );
    const frontend = sample(metrics, 'tributary_route_tokens_total{route="frontend"}')!;
    expect(frontend).toBeGreaterThan(0);
    expect(sample(metrics, 'tributary_agent_tokens_total{route="frontend",kind="input"}')).toBeGreaterThan(0);
    expect(sample(metrics, 'tributary_agent_cost_total{route="frontend",currency="USD"}')).toBeGreaterThan(0);
    expect(sample(metrics, 'tributary_turns_without_usage_total{route="frontend"}')).toBeUndefined();

    const [record] = await stack.worker.queue.admin.history('telegram:-8202:main');
    expect(record?.usage?.totalTokens).toBe(frontend);

    const cli = await admin(['usage', '--json']);
    expect(cli.code).toBe(0);
    const days = JSON.parse(cli.stdout).items as { route: string; totalTokens: number; turns: number }[];
    expect(days.find((day) => day.route === 'frontend')).toMatchObject({ turns: 1, totalTokens: frontend });
    const table = await admin(['usage']);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^DAY\s+ROUTE\s+TURNS\s+INPUT\s+OUTPUT\s+TOTAL\s+COST\s+DAILY BUDGET$/,
    );
    expect(table.stdout).toMatch(
      new RegExp(`frontend\\s+1\\s+\\d+\\s+\\d+\\s+${frontend}\\s+0\\.\\d{4} USD\\s+-`),
    );
  });

  it('holds a route whose day is spent with a notice, and lets it go once an operator raises the budget', async () => {
    await postTelegramMessage(stack, -8201, 70_000 + ++ids, '@tributary_bot first');
    await waitFor(() => shown(-8201).length === 1, { what: 'the first reply' });

    // The first turn spent the day's one token: the next message waits, and the thread is told once.
    await postTelegramMessage(stack, -8201, 70_000 + ++ids, '@tributary_bot second');
    await waitFor(() => shown(-8201).some((text) => text.includes('used its daily token budget')), {
      what: 'the budget notice',
    });
    expect(stack.warnings().map((line) => line.msg)).toContain(
      "the route's daily token budget is spent; the thread's messages wait until midnight UTC or a raised budget",
    );
    await waitFor(
      async () =>
        (sample(await workerMetrics(), 'tributary_route_budget_waits_total{route="support"}') ?? 0) >= 2,
      { what: 'a second wait: the batch is tried again', timeoutMs: 15_000 },
    );
    expect(shown(-8201).filter((text) => text.includes('used its daily token budget'))).toHaveLength(1);
    expect(await stack.worker.queue.admin.state('telegram:-8201:main')).toMatchObject({ backlog: 1 });
    const table = await admin(['usage']);
    expect(table.stdout).toMatch(/support\s+1\s+.*\s+1 \(file\)$/m);

    const raised = await admin(['budget', 'support', '1000000']);
    expect(raised).toMatchObject({ code: 0, stdout: 'support may spend 1000000 tokens a day\n' });
    await waitFor(() => shown(-8201).length === 3, {
      what: 'the answer to the waiting message',
      timeoutMs: 40_000,
    });
    expect(shown(-8201)[2]).toContain('second');
    expect(JSON.parse((await admin(['usage', '--json'])).stdout).budgets.support).toEqual({
      tokens: 1_000_000,
      source: 'override',
    });
    const cleared = await admin(['budget', 'support', '--clear']);
    expect(cleared.code).toBe(0);
    expect(JSON.parse((await admin(['usage', '--json'])).stdout).budgets.support).toEqual({
      tokens: 1,
      source: 'file',
    });
  });
});
