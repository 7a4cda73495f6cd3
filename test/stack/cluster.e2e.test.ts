import { type RedisClusterHandle, startRedisCluster, waitFor } from '@tributary/testkit';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, type Stack, startStack } from './stack-fixture.js';

let cluster: RedisClusterHandle;
let stack: Stack;
beforeAll(async () => {
  cluster = await startRedisCluster();
  // A primary stays down for several seconds below: the worker's warden rides that out only with a
  // presence TTL longer than the outage (docs/adr/0037); with the default it would revoke the worker,
  // which its supervisor restarts, and this in-process stack has none.
  stack = await startStack({ WORKER_PRESENCE_TTL_MS: '30000' }, cluster);
}, 60_000);
afterAll(async () => {
  // A stopped primary would keep the worker's shutdown waiting for Redis.
  await cluster?.restart();
  await stack?.close();
  await cluster?.stop();
}, 60_000);

const status = async (url: string) => (await fetch(url)).status;
const replies = (chatId: number) =>
  stack.calls('telegram', 'sendMessage').filter((c) => (c.body as { chat_id: number }).chat_id === chatId);

describe('the stack on a 3-primary Redis Cluster', () => {
  it('answers messages of threads spread over every primary, through several doorbell queues', async () => {
    const chats = Array.from({ length: 9 }, (_, i) => 7000 + i);
    for (const [i, chat] of chats.entries()) {
      const answer = await postTelegramMessage(stack, chat, 100 + i, `@tributary_bot hello ${i}`);
      expect(answer).toMatchObject({ status: 200, body: { outcome: 'accepted' } });
    }
    await waitFor(() => chats.every((chat) => replies(chat).length > 0), {
      what: 'a reply in every chat',
      timeoutMs: 30_000,
    });
    // The premise: those threads' keys sit on every primary, not on one.
    if (!(stack.redis instanceof Cluster)) throw new Error('the stack is not on the cluster');
    const primaries = stack.redis.nodes('master');
    expect(primaries).toHaveLength(3);
    const threadKeys = await Promise.all(primaries.map((node) => node.keys(`${stack.prefix}:{b*}:t:*`)));
    expect(threadKeys.map((keys) => keys.length > 0)).toEqual([true, true, true]);
  });

  it('while a primary is down: not ready, webhooks get 503 (never 500), nothing acknowledged; then recovers', async () => {
    const [victim] = await cluster.primaries();
    await victim!.kill();
    await waitFor(async () => (await status(`${stack.ingress.url}/readyz`)) === 503, {
      what: 'ingress not ready',
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    await waitFor(async () => (await status(`${stack.worker.healthUrl}/readyz`)) === 503, {
      what: 'worker not ready',
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    // Whichever primary a thread lives on, a cluster that lost slots refuses every write, once its
    // surviving nodes have marked it failed (cluster-node-timeout after the kill): wait for that, rather
    // than for whatever our own readiness checks happened to take.
    if (!(stack.redis instanceof Cluster)) throw new Error('the stack is not on the cluster');
    const survivors = stack.redis.nodes('master').filter((node) => node.status === 'ready');
    await waitFor(
      async () => {
        const states = await Promise.all(
          survivors.map((node) => node.cluster('INFO').then(String, () => '')),
        );
        return states.filter((info) => info !== '').every((info) => /^cluster_state:fail/m.test(info));
      },
      { what: 'the surviving nodes to mark the cluster failed', timeoutMs: 15_000, intervalMs: 100 },
    );
    const refused = await Promise.all(
      Array.from({ length: 6 }, (_, i) => postTelegramMessage(stack, 7100 + i, 200 + i, '@tributary_bot hi')),
    );
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ code: 'redis_unavailable' });
    }

    await cluster.restart();
    await waitFor(async () => (await status(`${stack.ingress.url}/readyz`)) === 200, {
      what: 'ingress ready again',
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    // Threads on every doorbell queue, the one on the restarted primary included.
    const chats = Array.from({ length: 9 }, (_, i) => 7200 + i);
    for (const [i, chat] of chats.entries()) {
      const answer = await postTelegramMessage(stack, chat, 300 + i, '@tributary_bot back');
      expect(answer).toMatchObject({ status: 200, body: { outcome: 'accepted' } });
    }
    await waitFor(() => chats.every((chat) => replies(chat).length > 0), {
      what: 'a reply in every chat after recovery',
      timeoutMs: 60_000,
    });
    // Failure detection, recovery and an agent turn, on a machine that may be busy.
  }, 120_000);
});
