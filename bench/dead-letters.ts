/**
 * Dead letters at scale (docs/adr/0043-dead-letters-bounded-and-grouped-by-class.md): agent crashes,
 * each reason naming its own pid, exit code and stderr tail, dead-lettered on one thread and spread over
 * 1,000 threads, N/10 and N of them (N = 10,000), on a private Redis through a real ingress:
 *  - with caps below N (DEAD_MAX_PER_THREAD 1000, DEAD_MAX 5000), what Redis keeps stays at the cap;
 *  - with caps above N, the overview (GET /admin/overview) answers as many bytes in as much Redis time
 *    for N as for N/10, and a bulk discard of all of them (POST /admin/dead-letters/actions, `all`,
 *    request after request from each answer's cursor) costs as much per item.
 *
 *   npm run bench:dead-letters [-- --count 10000] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { loadIngressConfig } from '@tributary/config';
import { startIngress } from '@tributary/ingress';
import { createMetrics } from '@tributary/observability';
import { type QueueConfig, Store } from '@tributary/queue';
import { bucketKeys, deadSetKeys } from '@tributary/queue/testing';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { median, rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, count: { type: 'string' } } });
const most = sizeOption(values, 'count', 10_000, 1_000);
const COUNTS = [most / 10, most];
const SPREAD = 1_000;
const CAPPED = { deadMaxPerThread: 1_000, deadMax: 5_000 };
const bucketShare = Math.floor(CAPPED.deadMax / 64);
const OVERVIEWS = 10;
const ROUNDS = 9;
const TOKEN = 'bench-dead-letters-token-0123456789';
const log = (line: string) => process.stderr.write(`${line}\n`);

const server = await startRedis({ private: true });
const stats = new Redis(server.url);

type Layout = 'one thread' | `${number} threads`;
type Measured = Awaited<ReturnType<typeof uncapped>>[number];

/** The thread of the `i`th crash of `count` in `layout`. */
const threadOf = (layout: Layout, count: number, i: number) =>
  layout === 'one thread' ? 'slack:T1:C1:1' : `slack:T1:C2:${i % Math.min(SPREAD, count)}`;

/** Dead-letters `count` crashes; one thread's one after another, many threads' side by side. */
async function crash(store: Store, layout: Layout, count: number): Promise<void> {
  const one = async (i: number) => {
    const thread = threadOf(layout, count, i);
    await store.queue.intake.enqueue(thread, { id: `m-${i}`, body: 'poison' });
    const claim = await store.queue.turns.claim(
      thread,
      (await store.queue.admin.state(thread)).epoch,
      'bench',
    );
    if (claim.kind !== 'batch') throw new Error(`no batch for ${thread}: ${claim.kind}`);
    const pid = 1_000 + i;
    await store.queue.turns.fail(
      claim.batch.lease,
      `agent process ${pid} exited with code ${i % 3}; stderr tail:\nat /tmp/run-${pid}/agent.js:${i}`,
    );
  };
  const lanes = layout === 'one thread' ? 1 : Math.min(SPREAD, count);
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = lane; i < count; i += lanes) await one(i);
    }),
  );
}

/** An ingress and a writer (the workers' side) on a key prefix of their own, with these bounds. */
async function stack(queue: Pick<QueueConfig, 'deadMaxPerThread' | 'deadMax'>) {
  const prefix = uniquePrefix('bench-dead');
  const store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix, maxFailures: 1, ...queue },
  });
  const config = loadIngressConfig({
    REDIS_URL: server.url,
    REDIS_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ADMIN_TOKENS: `bench:act:${TOKEN}`,
    DEAD_MAX_PER_THREAD: String(queue.deadMaxPerThread),
    DEAD_MAX: String(queue.deadMax),
  });
  const ingress = await startIngress(config, {
    logger: pino({ level: 'silent' }),
    webhooks: [],
    clients: new Map(),
    metrics: createMetrics(),
  });
  const call = async (path: string, body?: object) => {
    const response = await fetch(`${ingress.adminUrl}/admin${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.text();
  };
  return {
    store,
    call,
    /** Bytes the dead letters' keys take in Redis (MEMORY USAGE of each bucket's). */
    async deadBytes() {
      const keys = Array.from({ length: store.config.buckets }, (_, bucket) =>
        Object.values(deadSetKeys(bucketKeys(prefix, bucket), 'letters')),
      ).flat();
      const sizes = await Promise.all(keys.map((key) => stats.memory('USAGE', key, 'SAMPLES', '0')));
      return sizes.reduce<number>((sum, size) => sum + Number(size ?? 0), 0);
    },
    async close() {
      await ingress.close();
      await store.close();
    },
  };
}

/** Microseconds Redis spent on commands since the last reset (INFO commandstats), its own reads aside. */
async function redisMicros(): Promise<number> {
  const info = await stats.info('commandstats');
  return [...info.matchAll(/^cmdstat_([^:]+):calls=\d+,usec=(\d+)/gm)]
    .filter(([, name]) => name !== 'info' && !name!.startsWith('config'))
    .reduce((sum, [, , usec]) => sum + Number(usec), 0);
}

/** With caps below the count: what the dead letters keep, what they dropped, the Redis bytes they take. */
async function capped(layout: Layout, count: number) {
  await stats.flushall();
  const s = await stack(CAPPED);
  await crash(s.store, layout, count);
  const { held, evicted } = (await s.store.fleetStats()).dead.letters;
  const kept = { held, evicted: evicted.cap, bytes: await s.deadBytes() };
  await s.close();
  return kept;
}

type Stack = Awaited<ReturnType<typeof stack>>;

/**
 * With caps above the counts, one stack per count on the same Redis: the overview's size, and its Redis
 * time per call, the median of rounds taken in turn on each (so both see the same machine); then a bulk
 * discard of each stack's dead letters, its time and Redis time per item.
 */
async function uncapped(layout: Layout) {
  await stats.flushall();
  const stacks: Stack[] = [];
  for (const count of COUNTS) {
    const s = await stack({ deadMaxPerThread: count, deadMax: count * 64 });
    await crash(s.store, layout, count);
    stacks.push(s);
  }
  const micros: number[][] = stacks.map(() => []);
  const bytes: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, s] of stacks.entries()) {
      await stats.config('RESETSTAT');
      for (let call = 0; call < OVERVIEWS; call++) bytes[i] = (await s.call('/overview')).length;
      micros[i]!.push((await redisMicros()) / OVERVIEWS);
    }
  }
  const results = [];
  for (const [i, s] of stacks.entries()) {
    const count = COUNTS[i]!;
    await stats.config('RESETSTAT');
    const started = performance.now();
    let discarded = 0;
    let requests = 0;
    let cursor: string | undefined;
    do {
      const body = { action: 'discard', all: true, ...(cursor ? { cursor } : {}) };
      const answer = JSON.parse(await s.call('/dead-letters/actions', body)) as {
        result: { done: number };
        next: string | null;
      };
      discarded += answer.result.done;
      cursor = answer.next ?? undefined;
      requests++;
    } while (cursor !== undefined);
    const msPerItem = (performance.now() - started) / count;
    const microsPerItem = (await redisMicros()) / count;
    if (discarded !== count) throw new Error(`${layout}: discarded ${discarded} of ${count}`);
    results.push({
      bytes: bytes[i]!,
      overviewMicros: median(micros[i]!),
      msPerItem,
      microsPerItem,
      requests,
    });
    await s.close();
  }
  return results;
}

const LAYOUTS: Layout[] = ['one thread', `${SPREAD} threads`];
const rows: Cell[][] = [];
const ratios: Record<string, number> = {};
try {
  for (const layout of LAYOUTS) {
    log(`dead-letters: ${layout}`);
    const kept = [];
    for (const count of COUNTS) kept.push(await capped(layout, count));
    const [small, large] = (await uncapped(layout)) as [Measured, Measured];
    for (const [i, run] of [small, large].entries()) {
      rows.push([
        layout,
        COUNTS[i]!,
        kept[i]!.held,
        kept[i]!.evicted,
        rounded(kept[i]!.bytes / 1024, 1),
        run.bytes,
        rounded(run.overviewMicros, 0),
        run.requests,
        rounded(run.msPerItem, 3),
        rounded(run.microsPerItem, 1),
      ]);
    }
    const key = layout === 'one thread' ? 'one_thread' : 'spread';
    // What one thread may keep is its bucket's share when that is below its own cap.
    const cap = layout === 'one thread' ? Math.min(CAPPED.deadMaxPerThread, bucketShare) : CAPPED.deadMax;
    ratios[`kept_over_cap_${key}`] = rounded(kept[1]!.held / cap, 2);
    ratios[`overview_bytes_${key}`] = rounded(large.bytes / small.bytes, 2);
    ratios[`overview_redis_time_${key}`] = rounded(large.overviewMicros / small.overviewMicros, 2);
    ratios[`discard_time_per_item_${key}`] = rounded(large.msPerItem / small.msPerItem, 2);
    ratios[`discard_redis_time_per_item_${key}`] = rounded(large.microsPerItem / small.microsPerItem, 2);
  }
} finally {
  stats.disconnect();
  await server.stop();
}

const columns = [
  'layout',
  'crashes',
  'kept with caps',
  'dropped by caps',
  'dead letters KB kept',
  'overview bytes',
  'overview Redis µs',
  'discard requests',
  'discard ms/item',
  'discard Redis µs/item',
];
process.stdout.write(`\n${formatTable(columns, rows)}\n\n`);
for (const [name, value] of Object.entries(ratios)) process.stdout.write(`${name} = ${value}\n`);
const path = await writeBenchResult(values, {
  name: 'dead-letters',
  title: 'Dead letters: bounded, grouped by class, discarded per item',
  columns,
  rows,
  ratios,
  notes: [
    `Each crash's reason names its own pid, exit code and stderr tail; all make one reason class.`,
    `"kept with caps": DEAD_MAX_PER_THREAD ${CAPPED.deadMaxPerThread}, DEAD_MAX ${CAPPED.deadMax} (each of the 64 buckets keeps ${bucketShare}); "dead letters KB kept": MEMORY USAGE of the dead letters' keys.`,
    "The overview and the discard run with caps above the count, so every dead letter is there; the overview's Redis time is the median of 9 rounds of 10 calls, taken in turn on both counts.",
    `Ratios: the figure at ${most} crashes over the figure at ${most / 10}, per layout.`,
  ],
  charts: [{ title: 'Discard time per item', x: 'crashes', y: 'discard ms/item', group: 'layout' }],
});
log(`dead-letters: wrote ${path}`);
