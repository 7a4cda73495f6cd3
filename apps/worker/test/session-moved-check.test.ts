import { tmpdir } from 'node:os';
import { SessionPool } from '@tributary/acp';
import { builtInAgentCommand } from '@tributary/agent';
import { type Lease, Store, type ThreadQueue } from '@tributary/queue';
import { keysOf } from '@tributary/queue/testing';
import { type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { SessionContinuity } from '../src/turns/session-continuity.js';

const THREAD = 'gateway:C1:moved';
const done = { reply: 'ok', stopReason: 'end_turn' };

let server: RedisHandle;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

/** The thread's next message, claimed by `owner` under the next fence. */
async function claimNext(queue: ThreadQueue, owner: string, text: string): Promise<Lease> {
  await queue.intake.enqueue(THREAD, { id: text, body: text });
  const epoch = Number(await redis.hget(keysOf(queue, THREAD).state, 'epoch'));
  const claim = await queue.turns.claim(THREAD, epoch, owner);
  if (claim.kind !== 'batch') throw new Error(`no batch for ${owner}: ${claim.kind}`);
  return claim.batch.lease;
}

describe('the check for moved threads', () => {
  it('keeps a session its own commit has not recorded yet, and closes it once a later lease records another', async () => {
    const store = Store.open({
      url: server.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('moved') },
    });
    onTestFinished(() => store.close());
    const { queue, sessions: records } = store;
    const pool = new SessionPool({ cwd: tmpdir(), agent: builtInAgentCommand() });
    onTestFinished(() => pool.close());
    const identity = { agent: 'built-in', cwd: () => tmpdir() };
    const continuity = new SessionContinuity(records, pool, identity);
    const idle = () => false;

    // The thread ran last on another worker, which recorded its session under its own lease.
    const before = await claimNext(queue, 'worker-x', 'one');
    await queue.turns.commit(before, {
      ...done,
      session: { sessionId: 'elsewhere', agent: 'another agent', cwd: '/', generation: 0 },
    });

    // This worker runs the next turn on a session of its own; until its commit lands, the record
    // still names the other worker, under an older fence.
    const ours = await claimNext(queue, 'worker-a', 'two');
    const opened = await continuity.attach(THREAD, 0, ours);
    const session = continuity.answered(THREAD);
    expect(session).toMatchObject({ sessionId: opened.sessionId });
    expect(await continuity.releaseMoved('worker-a', idle)).toBe(0);
    expect(pool.has(THREAD)).toBe(true);

    await queue.turns.commit(ours, { ...done, ...(session ? { session } : {}) });
    expect(await records.get(THREAD)).toMatchObject({ worker: 'worker-a', fence: ours.fence });
    expect(await continuity.releaseMoved('worker-a', idle)).toBe(0);

    // Another worker takes the thread and records its session under a later fence: it moved.
    const later = await claimNext(queue, 'worker-y', 'three');
    await queue.turns.commit(later, {
      ...done,
      session: { sessionId: 'theirs', agent: 'built-in', cwd: tmpdir(), generation: 0 },
    });
    expect(await continuity.releaseMoved('worker-a', idle)).toBe(1);
    expect(pool.has(THREAD)).toBe(false);
  });
});
