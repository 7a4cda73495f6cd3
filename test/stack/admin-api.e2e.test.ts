import { type RedisHandle, startRedis, startRedisCluster, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, type Stack, startStack } from './stack-fixture.js';

const ACT = 'stack-admin-act-token-0123456789';
const READ = 'stack-admin-read-token-012345678';

// biome-ignore lint/suspicious/noExplicitAny: the tests read whatever the API answered.
type Json = any;

describe.each([
  ['one Redis', () => startRedis()],
  ['a 3-primary Redis Cluster', () => startRedisCluster()],
])('the admin API of a running stack on %s', (_name, start: () => Promise<RedisHandle>) => {
  let server: RedisHandle;
  let stack: Stack;
  beforeAll(async () => {
    server = await start();
    stack = await startStack({ ADMIN_TOKENS: `ops:act:${ACT},viewer:read:${READ}` }, server);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await server?.stop();
  }, 60_000);

  const call = async (path: string, method = 'GET', body?: unknown, token = ACT) => {
    const response = await fetch(`${stack.ingress.adminUrl}/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const threadOf = async (chat: number) => {
    const all = await call('/threads?state=all&limit=500');
    return all.body.items.find((row: Json) => row.thread.includes(String(chat)))?.thread as
      | string
      | undefined;
  };
  const replies = (chat: number) =>
    stack.calls('telegram', 'sendMessage').filter((c) => (c.body as { chat_id: number }).chat_id === chat);

  it('lists a failing agent dead letter by reason, re-drives one and discards the rest in bulk', async () => {
    const chats = [9101, 9102, 9103];
    for (const [i, chat] of chats.entries()) {
      await postTelegramMessage(
        stack,
        chat,
        500 + i,
        `@tributary_bot break\n@agent {"error": "tool exploded"}`,
      );
    }
    await waitFor(async () => (await call('/dead-letters')).body.total === 3, {
      what: 'three dead letters',
      timeoutMs: 30_000,
    });
    const dead = await call('/dead-letters?limit=2');
    expect(dead.body.items).toHaveLength(2);
    expect(dead.body.next).toEqual(expect.any(String));
    expect(dead.body.groups).toEqual([{ reason: expect.stringContaining('tool exploded'), count: 3 }]);
    const rest = await call(`/dead-letters?limit=2&cursor=${encodeURIComponent(dead.body.next)}`);
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.next).toBeNull();
    const [first] = dead.body.items;
    expect(first).toMatchObject({ messages: 1, deadAt: expect.stringMatching(/Z$/) });

    const thread = encodeURIComponent(first.thread);
    const report = await call(`/threads/${thread}`);
    expect(report.body.deadLetters[0].messages[0].body).toMatchObject({ sender: { name: 'ada' } });
    const batch = await call(`/threads/${thread}/batches/${first.batchId}`);
    expect(batch.body.prompt[0].text).toMatch(/^<sender_context>\n/);

    const redriven = await call(`/threads/${thread}/dead-letters/${first.batchId}/redrive`, 'POST');
    expect(redriven).toMatchObject({ status: 200, body: { result: 're-driven: 1 message queued again' } });
    expect((await call(`/threads/${thread}/dead-letters/${first.batchId}/redrive`, 'POST')).status).toBe(404);

    const reason = dead.body.groups[0].reason;
    const dry = await call('/dead-letters/actions', 'POST', { action: 'discard', reason, dryRun: true });
    expect(dry.body).toMatchObject({ dryRun: true, matched: 2 });
    const discarded = await call('/dead-letters/actions', 'POST', { action: 'discard', reason });
    expect(discarded.body).toMatchObject({ matched: 2, result: { done: 2, absent: 0 } });
    const audit = await call('/audit?limit=5');
    expect(audit.body.items[0]).toMatchObject({
      actor: 'ops',
      action: 'dead-letters.discard',
      target: { reason },
      result: { done: 2, absent: 0 },
    });
    expect((await call('/dead-letters/actions', 'POST', { action: 'discard', all: true }, READ)).status).toBe(
      403,
    );
  });

  it('pauses a thread (it keeps accepting, starts no turn, says so) and resumes it', async () => {
    const chat = 9201;
    await postTelegramMessage(stack, chat, 600, '@tributary_bot hello');
    await waitFor(() => replies(chat).length === 1, { what: 'the first reply', timeoutMs: 30_000 });
    const thread = (await threadOf(chat))!;
    const paused = await call('/threads/actions', 'POST', { action: 'pause', items: [{ thread }] });
    expect(paused.body).toMatchObject({ matched: 1, result: { done: 1, absent: 0 } });
    await postTelegramMessage(stack, chat, 601, '@tributary_bot are you there?');
    const receipt = await call('/messages/601');
    expect(receipt.body.items).toEqual([expect.objectContaining({ thread, status: 'queued', paused: true })]);
    expect((await call('/threads?state=paused')).body.items.map((r: Json) => r.thread)).toContain(thread);
    expect(replies(chat)).toHaveLength(1);

    const resumed = await call('/threads/actions', 'POST', { action: 'resume', state: 'paused' });
    expect(resumed.body.result.done).toBeGreaterThanOrEqual(1);
    await waitFor(() => replies(chat).length === 2, { what: 'the reply after resume', timeoutMs: 30_000 });
    expect((await call('/messages/601')).body.items[0]).toMatchObject({
      status: 'batched',
      batch: { outcome: 'complete' },
    });
  });

  it('lists workers with their sessions, and drains one: it hands its threads back and stays up', async () => {
    await waitFor(async () => (await call('/workers')).body.items[0]?.sessions.length > 0, {
      what: 'a worker reporting a live session',
      timeoutMs: 10_000,
    });
    const [worker] = (await call('/workers')).body.items;
    expect(worker).toMatchObject({ owner: stack.worker.owner, state: 'taking', concurrency: 2 });
    expect(worker.agentProcesses[0]).toMatchObject({ pid: expect.any(Number), sessions: expect.any(Number) });

    expect((await call('/workers/nobody/drain', 'POST')).status).toBe(404);
    expect((await call(`/workers/${encodeURIComponent(worker.owner)}/drain`, 'POST')).status).toBe(202);
    let drained: Json | undefined;
    await waitFor(
      async () => {
        drained = (await call('/workers')).body.items[0];
        return drained?.state === 'drained';
      },
      { what: 'the worker drained', timeoutMs: 15_000 },
    );
    // Its first report as drained lists no thread: a turn the drain aborted has ended by then.
    expect(drained).toMatchObject({ running: [] });
    const health = await fetch(`${stack.worker.healthUrl}/readyz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ error: expect.stringContaining('drained') });
    expect((await fetch(`${stack.worker.healthUrl}/livez`)).status).toBe(200);
    // It takes no more turns: a new message waits, runnable, for another worker.
    await postTelegramMessage(stack, 9301, 700, '@tributary_bot anyone?');
    const waiting = (await threadOf(9301))!;
    const runnable = await call('/threads?state=runnable');
    expect(runnable.body.items.map((r: Json) => r.thread)).toContain(waiting);
    expect((await call('/workers')).body.items[0]).toMatchObject({ state: 'drained', running: [] });
  });
});
