/**
 * Redis memory per message (issue: broker cost). Messages shaped as ingress stores them (a gateway
 * event with its idempotency key) go to T threads, K per thread, with no worker running:
 *   - the first message of a thread, and each further (buffered) message, against a baseline that
 *     stores only the event: XADD of the same body to one stream per thread;
 *   - after every thread's batches are claimed and committed (the turn's reply is 'ok'), the bytes
 *     kept per committed message and per thread (history records, state, dedup index);
 *   - a waiting doorbell job, measured on its own (it is BullMQ's, and gone once taken);
 *   - with a short idle TTL, how many of the threads' keys are left once it has passed.
 * Rounds are interleaved and each figure is the median round; bytes come from INFO used_memory.
 *
 *   npm run bench:memory [-- --threads 2000 --per-thread 5 --rounds 3] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { queuedArrival } from '@tributary/packing';
import { BullDoorbell, type Doorbell, queueConfig, queueDefaults, threadQueue } from '@tributary/queue';
import { deletePrefix, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { median, rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    threads: { type: 'string' },
    'per-thread': { type: 'string' },
    rounds: { type: 'string' },
  },
});
const threads = sizeOption(values, 'threads', 2000, 200);
const perThread = sizeOption(values, 'per-thread', 5);
const rounds = sizeOption(values, 'rounds', 3, 1);
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
  const thread_ = `gateway:discord:1234567890123456789:t-${thread}`;
  return { thread: thread_, arrival: queuedArrival(event, `${thread_}:m-${thread}-${n}`) };
}

/** Sends `count` commands, 200 in flight at a time. */
async function inParallel(count: number, one: (i: number) => Promise<unknown>): Promise<void> {
  for (let from = 0; from < count; from += 200) {
    await Promise.all(Array.from({ length: Math.min(200, count - from) }, (_, i) => one(from + i)));
  }
}

const noDoorbell: Doorbell = { ring: async () => {}, pending: async () => true, taken: async () => {} };

interface Round {
  first: number;
  buffered: number;
  committedPerMessage: number;
  committedPerThread: number;
  keysBeforeIdle: number;
  /** Thread keys still there once the idle TTL has passed, by what they hold. */
  leftByKind: Record<string, number>;
  bodyBytes: number;
}

async function tributary(): Promise<Round> {
  const config = queueConfig({ prefix: uniquePrefix('mem'), affinity: false, idleTtlMs: IDLE_TTL_MS });
  const queue = threadQueue(redis, config, noDoorbell);
  let bodyBytes = 0;
  const start = await usedMemory();
  await inParallel(threads, async (t) => {
    const { thread, arrival } = message(t, 0);
    bodyBytes += Buffer.byteLength(arrival.body);
    await queue.intake.enqueue(thread, arrival);
  });
  const afterFirst = await usedMemory();
  await inParallel(threads * (perThread - 1), async (i) => {
    const { thread, arrival } = message(i % threads, 1 + Math.floor(i / threads));
    await queue.intake.enqueue(thread, arrival);
  });
  const afterBuffered = await usedMemory();
  await inParallel(threads, async (t) => {
    const { thread } = message(t, 0);
    let claim = await queue.turns.claim(thread, (await queue.admin.state(thread)).epoch, 'bench');
    if (claim.kind !== 'batch') throw new Error(`claim: ${claim.kind}`);
    let batch = claim.batch;
    for (;;) {
      const next = await queue.turns.commit(batch.lease, { reply: 'ok', stopReason: 'end_turn' });
      if (next.kind !== 'batch') break;
      batch = next.batch;
    }
    claim = undefined as never;
  });
  const afterCommit = await usedMemory();
  const pattern = `${config.prefix}:{b*}:t:*`;
  const keys = await scanKeys(pattern);
  // Keys on the idle TTL go; any with a longer window of its own would stay (none should). A key gone
  // since the scan (-2: the first threads' may expire while the last ones commit) is not staying.
  const ttls = await Promise.all(keys.map((key) => redis.pttl(key)));
  const staying = ttls.filter((ttl) => ttl === -1 || ttl > IDLE_TTL_MS).length;
  await waitFor(async () => (await scanKeys(pattern)).length <= staying || undefined, {
    what: 'idle threads to expire',
    timeoutMs: IDLE_TTL_MS * 10,
  });
  const left = await scanKeys(pattern);
  const leftByKind: Record<string, number> = {};
  for (const key of left) leftByKind[keyKind(key)] = (leftByKind[keyKind(key)] ?? 0) + 1;
  await deletePrefix(redis, config.prefix);
  const messages = threads * perThread;
  return {
    first: (afterFirst - start) / threads,
    buffered: (afterBuffered - afterFirst) / (threads * (perThread - 1)),
    committedPerMessage: (afterCommit - start) / messages,
    committedPerThread: (afterCommit - start) / threads,
    keysBeforeIdle: keys.length,
    leftByKind,
    bodyBytes: bodyBytes / threads,
  };
}

async function scanKeys(pattern: string): Promise<string[]> {
  let cursor = '0';
  const found: string[] = [];
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** What a thread key holds: the name after the thread's encoded id (`state`, `dedup`, …). */
function keyKind(key: string): string {
  return key.slice(key.indexOf(':t:') + 3).split(':')[1] ?? '?';
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

const m = (pick: (r: Round) => number) => Math.round(median(ours.map(pick)));
const baseFirst = Math.round(median(base.map((b) => b.first)));
const baseBuffered = Math.round(median(base.map((b) => b.buffered)));
const first = m((r) => r.first);
const buffered = m((r) => r.buffered);
// Redis bytes, and the thread keys left by the idle TTL; the event alone is '' where it has no counterpart.
const keysBefore = m((r) => r.keysBeforeIdle);
const leftKinds = [...new Set(ours.flatMap((r) => Object.keys(r.leftByKind)))].sort();
const columns = ['what', 'unit', 'tributary', 'event alone, XADD (baseline)'];
const rows: [string, string, number, number | string][] = [
  ['first message of a thread', 'bytes', first, baseFirst],
  ['buffered message', 'bytes', buffered, baseBuffered],
  ['per committed message', 'bytes', m((r) => r.committedPerMessage), ''],
  ['per thread after its turns', 'bytes', m((r) => r.committedPerThread), ''],
  ['waiting doorbell job', 'bytes', Math.round(median(bells)), ''],
  ['right after the last commit', 'thread keys', keysBefore, ''],
  // The "after" of that before, drawn even when nothing is left (the point of the idle TTL).
  ['idle TTL later', 'thread keys', m((r) => Object.values(r.leftByKind).reduce((sum, n) => sum + n, 0)), ''],
  ...leftKinds.map((kind): [string, string, number, string] => [
    `idle TTL later: ${kind}`,
    'thread keys',
    m((r) => r.leftByKind[kind] ?? 0),
    '',
  ]),
];
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'memory',
  title: 'Redis memory per message and idle expiry',
  columns,
  rows,
  ratios: {
    first_over_event_alone: rounded(first / baseFirst),
  },
  charts: [{ title: 'Redis memory and idle expiry', x: 'what', y: 'tributary', facet: 'unit' }],
  notes: [
    `Redis INFO used_memory, ${threads} threads × ${perThread} messages shaped as ingress stores them (event body ${m((r) => r.bodyBytes)} B), no worker running; median of ${rounds} interleaved rounds after a warm-up round.`,
    'event alone: XADD of the same body to one stream per thread, the least a durable queue keeps.',
    "buffered message: its inbox entry goes into the stream node the thread's first message allocated (Redis preallocates a node's 4 KiB, hence about 0 B for the event alone), so what it adds is its dedup index entry and its receipt.",
    'after its turns: every batch claimed and committed with a short reply; what stays is history, thread state, gate, receipts and the dedup index until the idle TTL.',
    `idle expiry: the queue ran with a ${IDLE_TTL_MS} ms idle TTL (production: THREAD_IDLE_TTL_MS, 7 days by default); thread keys are counted right after the last commit and once every key on that TTL has gone (the dedup index and receipts never outlive it); a row per kind lists any key left.`,
  ],
});
