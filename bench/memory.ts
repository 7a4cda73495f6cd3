/**
 * Redis memory per message (issue: broker cost). Messages shaped as ingress stores them (a gateway
 * event with its idempotency key) go to T threads, K per thread, with no worker running:
 *   - the first message of a thread, and each further (buffered) message, against a baseline that
 *     stores only the event: XADD of the same body to one stream per thread;
 *   - after every thread's batches are claimed and committed (the turn's reply is 'ok'), the bytes
 *     kept per committed message and per thread (history records, state, dedup keys);
 *   - a waiting doorbell job, measured on its own (it is BullMQ's, and gone once taken);
 *   - with a short idle TTL, how many of the threads' keys are left once it has passed.
 * Rounds are interleaved and each figure is the median round; bytes come from INFO used_memory.
 *
 *   npm run bench:memory [-- --threads 2000 --per-thread 5 --rounds 3]
 */
import { parseArgs } from 'node:util';
import { queuedArrival } from '@tributary/packing';
import { BullDoorbell, type Doorbell, queueConfig, queueDefaults, ThreadQueue } from '@tributary/queue';
import { deletePrefix, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { median, printTable } from './load.js';

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '2000' },
    'per-thread': { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
  },
});
const threads = Number(values.threads);
const perThread = Number(values['per-thread']);
const rounds = Number(values.rounds);
const IDLE_TTL_MS = 2_000;
const log = (line: string) => process.stderr.write(`${line}\n`);

const server = await startRedis({ private: true });
const redis = new Redis(server.url);

async function usedMemory(): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

function message(thread: number, n: number) {
  const event = {
    eventId: `m-${thread}-${n}`,
    platform: 'discord',
    channelId: '1234567890123456789',
    threadId: `t-${thread}`,
    sender: { id: '987654321098765432', name: 'alice', displayName: 'Alice', isBot: false },
    timestamp: new Date().toISOString(),
    text: 'is the build green yet? run the e2e suite when it is',
    attachments: [],
  };
  const arrival = queuedArrival(event);
  const thread_ = `gateway:discord:1234567890123456789:t-${thread}`;
  return { thread: thread_, arrival: { ...arrival, idempotencyKey: `${thread_}:m-${thread}-${n}` } };
}

/** Sends `count` commands, 200 in flight at a time. */
async function inParallel(count: number, one: (i: number) => Promise<unknown>): Promise<void> {
  for (let from = 0; from < count; from += 200) {
    await Promise.all(Array.from({ length: Math.min(200, count - from) }, (_, i) => one(from + i)));
  }
}

const noDoorbell: Doorbell = { ring: async () => {}, pending: async () => true, withdraw: async () => {} };

interface Round {
  first: number;
  buffered: number;
  committedPerMessage: number;
  committedPerThread: number;
  leftAfterIdle: number;
  keysBeforeIdle: number;
  bodyBytes: number;
}

async function tributary(): Promise<Round> {
  const config = queueConfig({ prefix: uniquePrefix('mem'), affinity: false, idleTtlMs: IDLE_TTL_MS });
  const queue = new ThreadQueue(redis, config, noDoorbell);
  let bodyBytes = 0;
  const start = await usedMemory();
  await inParallel(threads, async (t) => {
    const { thread, arrival } = message(t, 0);
    bodyBytes += Buffer.byteLength(arrival.body);
    await queue.enqueue(thread, arrival);
  });
  const afterFirst = await usedMemory();
  await inParallel(threads * (perThread - 1), async (i) => {
    const { thread, arrival } = message(i % threads, 1 + Math.floor(i / threads));
    await queue.enqueue(thread, arrival);
  });
  const afterBuffered = await usedMemory();
  await inParallel(threads, async (t) => {
    const { thread } = message(t, 0);
    let claim = await queue.claim(thread, (await queue.state(thread)).epoch, 'bench');
    if (claim.kind !== 'batch') throw new Error(`claim: ${claim.kind}`);
    let batch = claim.batch;
    for (;;) {
      const next = await queue.commit(batch.lease, { reply: 'ok', stopReason: 'end_turn' });
      if (next.kind !== 'batch') break;
      batch = next.batch;
    }
    claim = undefined as never;
  });
  const afterCommit = await usedMemory();
  const pattern = `${config.prefix}:{b*}:t:*`;
  const keysBeforeIdle = await countKeys(pattern);
  await waitFor(async () => (await countKeys(pattern)) === 0 || undefined, {
    what: 'idle threads to expire',
    timeoutMs: IDLE_TTL_MS * 10,
  }).catch(() => undefined);
  const leftAfterIdle = await countKeys(pattern);
  await deletePrefix(redis, config.prefix);
  const messages = threads * perThread;
  return {
    first: (afterFirst - start) / threads,
    buffered: (afterBuffered - afterFirst) / (threads * (perThread - 1)),
    committedPerMessage: (afterCommit - start) / messages,
    committedPerThread: (afterCommit - start) / threads,
    leftAfterIdle,
    keysBeforeIdle,
    bodyBytes: bodyBytes / threads,
  };
}

async function countKeys(pattern: string): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    count += keys.length;
  } while (cursor !== '0');
  return count;
}

/** The event alone: XADD of the same body to one stream per thread. */
async function baseline(): Promise<{ first: number; buffered: number }> {
  const prefix = uniquePrefix('mem-base');
  const add = (t: number, n: number) => redis.xadd(`${prefix}:${t}`, '*', 'body', message(t, n).arrival.body);
  const start = await usedMemory();
  await inParallel(threads, (t) => add(t, 0));
  const afterFirst = await usedMemory();
  await inParallel(threads * (perThread - 1), (i) => add(i % threads, 1 + Math.floor(i / threads)));
  const afterBuffered = await usedMemory();
  await deletePrefix(redis, prefix);
  return {
    first: (afterFirst - start) / threads,
    buffered: (afterBuffered - afterFirst) / (threads * (perThread - 1)),
  };
}

async function doorbellJob(): Promise<number> {
  const prefix = uniquePrefix('mem-bell');
  const doorbell = new BullDoorbell(redis, { prefix, buckets: queueDefaults.buckets, doorbellQueues: 1 });
  await doorbell.ring('warm', 'warm', 1);
  const start = await usedMemory();
  await inParallel(threads, (t) => doorbell.ring(`t-${t}`, `t-${t}`, 1));
  const bytes = (await usedMemory()) - start;
  await doorbell.close();
  await deletePrefix(redis, prefix);
  return bytes / threads;
}

const ours: Round[] = [];
const base: { first: number; buffered: number }[] = [];
const bells: number[] = [];
try {
  await tributary();
  await baseline();
  for (let r = 1; r <= rounds; r++) {
    ours.push(await tributary());
    base.push(await baseline());
    bells.push(await doorbellJob());
    log(`memory bench: round ${r}/${rounds}`);
  }
} finally {
  redis.disconnect();
  await server.stop();
}

const m = (pick: (r: Round) => number) => median(ours.map(pick));
const baseFirst = median(base.map((b) => b.first));
const baseBuffered = median(base.map((b) => b.buffered));
process.stdout.write(
  `\nRedis bytes (INFO used_memory), ${threads} threads x ${perThread} messages, event body ` +
    `${m((r) => r.bodyBytes).toFixed(0)} B, median of ${rounds} interleaved rounds.\n\n`,
);
printTable(
  ['per', 'tributary B', 'event alone (XADD) B', 'beyond the event B'],
  [
    ['first message of a thread', m((r) => r.first), baseFirst],
    ['buffered message', m((r) => r.buffered), baseBuffered],
  ].map(([name, ours, event]) => [
    String(name),
    (ours as number).toFixed(0),
    (event as number).toFixed(0),
    ((ours as number) - (event as number)).toFixed(0),
  ]),
);
process.stdout.write(
  `\nafter commit: ${m((r) => r.committedPerMessage).toFixed(0)} B per committed message, ` +
    `${m((r) => r.committedPerThread).toFixed(0)} B per thread (history, state, dedup keys)\n` +
    `waiting doorbell job: ${median(bells).toFixed(0)} B (BullMQ's; removed once taken)\n` +
    `idle expiry (${IDLE_TTL_MS} ms): ${m((r) => r.keysBeforeIdle)} thread keys after the last commit, ` +
    `${m((r) => r.leftAfterIdle)} left after the idle TTL\n`,
);
