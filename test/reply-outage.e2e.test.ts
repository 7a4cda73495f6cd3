import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { queuedArrival } from '@tributary/packing';
import { Store } from '@tributary/queue';
import { type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliProcess, startCli } from './support/cli-process.js';

const THREAD = 'gateway:telegram:C1:T1';
const SECRET = 'reply-outage-gateway-secret-31';

/** The gateway's reply endpoint, which the test takes down and brings back on the same port. */
async function replyReceiver() {
  const received: { reply_to: string; content: { text: string } }[] = [];
  let server: Server | undefined;
  let port = 0;
  const receiver = {
    received,
    get url() {
      return `http://127.0.0.1:${port}/reply`;
    },
    async up() {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => {
          body += chunk;
        });
        req.on('end', () => {
          const parsed = JSON.parse(body);
          // Progress reactions come as commands; what matters here is the replies.
          if (parsed.command === undefined) received.push(parsed);
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    },
    async down() {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    },
  };
  await receiver.up();
  return receiver;
}

function message(n: number, text: string) {
  return queuedArrival(
    {
      eventId: `m-${n}`,
      platform: 'telegram',
      channelId: 'C1',
      threadId: 'T1',
      sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
      timestamp: new Date().toISOString(),
      text,
      attachments: [],
      replyRef: `evt_${n}`,
    },
    `telegram:C1:m-${n}`,
  );
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup.length = 0;
});

async function stack(env: Record<string, string>) {
  const redis: RedisHandle = await startRedis();
  cleanup.push(() => redis.stop());
  const prefix = uniquePrefix('outage');
  const receiver = await replyReceiver();
  cleanup.push(() => receiver.down());
  const store = Store.open({ url: redis.url, connection: { kind: 'patient' }, queue: { prefix } });
  cleanup.push(() => store.close());
  const common = { REDIS_URL: redis.url, REDIS_PREFIX: prefix, LOG_LEVEL: 'info' };
  const worker: CliProcess = startCli('worker', {
    ...common,
    METRICS_PORT: '0',
    GATEWAY_REPLY_URL: receiver.url,
    GATEWAY_SECRET: SECRET,
    AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
    TRIBUTARY_AGENT_SCRIPTING: 'on',
    ...env,
  });
  cleanup.push(() => worker.stop());
  const started = await worker.waitForLog('the worker to start', (l) => l.msg === 'worker started');
  return { common, receiver, store, worker, healthUrl: String(started.healthUrl) };
}

// Real worker processes start cold (TypeScript loaded by tsx) on a shared machine.
describe('replies survive a platform outage (real processes)', { timeout: 180_000 }, () => {
  it('endpoint down while two turns finish and every delivery fails, backing off: one prompt per batch, both replies after recovery, in order, once', async () => {
    const { receiver, store, worker } = await stack({ REPLY_RETRY_MAX_DELAY_MS: '2000' });
    await receiver.down();
    await store.queue.intake.enqueue(THREAD, message(1, 'first question\n@agent {"delayMs": 500}'));
    await worker.waitForLog('turn 1 to start', (l) => l.msg === 'dispatch');
    await store.queue.intake.enqueue(THREAD, message(2, 'second question'));
    await waitFor(async () => (await store.queue.admin.history(THREAD)).length === 2, {
      what: 'both turns committed',
      timeoutMs: 30_000,
    });
    // The outage lasts until the worker has tried again and again, its backoff grown to its longest.
    await waitFor(
      () => worker.logs.filter((l) => String(l.msg).startsWith('reply not delivered')).length >= 5,
      {
        what: 'five failed deliveries',
        timeoutMs: 60_000,
      },
    );
    expect(receiver.received).toEqual([]);

    await receiver.up();
    await waitFor(async () => (await store.replies.pending(THREAD)).length === 0, {
      what: 'the outbox to drain',
      timeoutMs: 30_000,
    });
    expect(receiver.received.map((r) => r.reply_to)).toEqual(['evt_1', 'evt_2']);
    expect(receiver.received[0]!.content.text).toContain('first question');
    expect(receiver.received[1]!.content.text).toContain('second question');
    const dispatches = worker.logs.filter((l) => l.msg === 'dispatch');
    expect(new Set(dispatches.map((l) => l.batchId)).size).toBe(2);
    expect(dispatches).toHaveLength(2);
  });

  it('endpoint down past the horizon: a dead reply in the admin API and a metric; re-drive delivers it once', async () => {
    const { common, receiver, store, worker, healthUrl } = await stack({
      REPLY_RETRY_HORIZON_MS: '3000',
      REPLY_RETRY_MAX_DELAY_MS: '500',
    });
    const token = 'admin-token-for-the-outage-test';
    const ingress = startCli('ingress', {
      ...common,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_TOKEN: token,
    });
    cleanup.push(() => ingress.stop());
    const listening = await ingress.waitForLog('ingress to listen', (l) => l.msg === 'ingress listening');
    const admin = (path: string, method = 'GET') =>
      fetch(`${listening.adminUrl}/admin${path}`, { method, headers: { authorization: `Bearer ${token}` } });
    const deadReplies = async () =>
      ((await (await admin('/dead-replies')).json()) as { items: { thread: string }[] }).items.map(
        (r) => r.thread,
      );

    await receiver.down();
    await store.queue.intake.enqueue(THREAD, message(1, 'will it arrive?'));
    const buried = await worker.waitForLog('the reply to be given up', (l) => l.level === 50, 60_000);
    expect(String(buried.msg)).toContain('re-drive it from the admin API');

    expect(await deadReplies()).toEqual([THREAD]);
    const report = (await (await admin(`/threads/${encodeURIComponent(THREAD)}`)).json()) as {
      deadReplies: { id: string }[];
    };
    expect(report.deadReplies).toHaveLength(1);
    const metrics = await (await fetch(`${healthUrl}/metrics`)).text();
    expect(metrics).toContain('tributary_reply_deliveries_total{outcome="dead"} 1');

    await receiver.up();
    const replyId = encodeURIComponent(report.deadReplies[0]!.id);
    const redrive = await admin(
      `/threads/${encodeURIComponent(THREAD)}/dead-replies/${replyId}/redrive`,
      'POST',
    );
    expect(redrive.status).toBe(200);
    await waitFor(
      async () => (await store.replies.pending(THREAD)).length === 0 && receiver.received.length > 0,
      {
        what: 'the re-driven reply',
        timeoutMs: 30_000,
      },
    );
    expect(receiver.received.map((r) => r.reply_to)).toEqual(['evt_1']);
    expect(await deadReplies()).toEqual([]);
  });
});
