/**
 * Multi-process chaos test of the turn queue: worker processes are SIGKILLed, frozen with SIGSTOP and
 * restarted while producers send; a share of doorbells is dropped on purpose. Session affinity is on
 * (the default), so doorbells handed to a killed or frozen worker must fall back to the shared queue.
 * Ends with
 * `chaos: sent=<n> committed=<n> lost=0 duplicates=0 reordered=0 overlaps_committed=0 errors_500=0`
 * and exits non-zero when any of the last five is not zero.
 *
 *   npm run chaos -- --seconds 60 [--workers 3] [--threads 120] [--rate 400] [--drop 0.1] [--cluster]
 *                    [--failover] [--ack-replicas <n|auto>]
 *
 * `--cluster` runs it on a private 3-primary Redis Cluster, with one doorbell queue per primary.
 * `--failover` adds a replica to each primary and SIGKILLs one primary halfway through: its replica is
 * promoted, the run goes on, and the killed node comes back as the new primary's replica.
 * Producers enqueue as ingress does (its fail-fast connection, the default REDIS_ACK_REPLICAS `auto`:
 * a replica confirms each message when the primary has one); `--ack-replicas <n|auto>` overrides it. A
 * message refused meanwhile counts as refused, not sent; a refusal ingress would answer with 500 rather
 * than 503 (anything but "Redis unavailable") fails the run. The time to each acknowledgement is
 * printed (p50, p95): with replicas, what the wait for one costs per message.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { BullDoorbell, isRedisUnavailable, openConnection, threadQueue } from '@tributary/queue';
import { type RedisHandle, startRedis, startRedisCluster, uniquePrefix, waitFor } from '@tributary/testkit';
import { percentile } from '../../bench/stats.js';
import { chaosQueueConfig } from './chaos-config.js';
import { DroppingDoorbell } from './dropping-doorbell.js';
import { addTallies, type Tally, tallyThread } from './tally.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    workers: { type: 'string', default: '3' },
    threads: { type: 'string', default: '120' },
    rate: { type: 'string', default: '400' },
    drop: { type: 'string', default: '0.1' },
    cluster: { type: 'boolean', default: false },
    failover: { type: 'boolean', default: false },
    'ack-replicas': { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const workerCount = Number(values.workers);
const threadCount = Number(values.threads);
const rate = Number(values.rate);
const dropRate = Number(values.drop);

const log = (line: string) => process.stderr.write(`${line}\n`);
// Every sleep here paces the load, the faults or the run itself; the end is awaited as a condition
// (`settled`), never as a sleep.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (min: number, max: number) => min + Math.random() * (max - min);

const onCluster = values.cluster || values.failover;
const cluster = onCluster ? await startRedisCluster({ replicas: values.failover ? 1 : 0 }) : undefined;
const redisHandle: RedisHandle = cluster ?? (await startRedis());
const doorbellQueues = onCluster ? 3 : 1;
const prefix = uniquePrefix('chaos');
const redis = openConnection(redisHandle.url, { kind: 'patient' });
// What ingress uses to acknowledge: no offline queue, a command that hangs times out.
const intake = openConnection(redisHandle.url, { kind: 'fail-fast', timeoutMs: 1_000 });
const ackReplicas = values['ack-replicas'];
const config = chaosQueueConfig(
  prefix,
  doorbellQueues,
  ackReplicas === undefined ? {} : { ackReplicas: ackReplicas === 'auto' ? 'auto' : Number(ackReplicas) },
);
const bull = new BullDoorbell(intake, config);
const doorbell = new DroppingDoorbell(bull, dropRate);
const ingress = threadQueue(intake, config, doorbell);
// Reads thread state and history; rings nothing.
const queue = threadQueue(redis, config, doorbell);

const workers: (ChildProcess | undefined)[] = [];
const stats = { kills: 0, freezes: 0, refused: 0, failedOver: 0 };
/** Refusals ingress would answer with 500 (not "Redis unavailable"), by message. */
const internalErrors = new Map<string, number>();
const ackMs: number[] = [];

/** Halfway through, SIGKILLs a primary; the cluster promotes its replica and the run goes on. */
async function failOver(): Promise<void> {
  await sleep((seconds * 1000) / 2);
  const [victim] = (await cluster?.primaries()) ?? [];
  if (!victim || !producing) return;
  log(`chaos: SIGKILL of primary :${victim.port} at t=${Math.round((Date.now() - started) / 1000)}s`);
  await victim.kill('SIGKILL');
  const killedAt = Date.now();
  await waitFor(
    async () => {
      const primaries = await cluster!.primaries();
      return primaries.length === 3 && !primaries.includes(victim);
    },
    { what: 'a replica promoted in place of the killed primary', timeoutMs: 30_000, intervalMs: 20 },
  );
  const promotedAfter = Date.now() - killedAt;
  // Back, it rejoins as a replica of the promoted node, so WAIT can be met on that shard again.
  await victim.launch();
  await cluster!.healthy(30_000);
  stats.failedOver++;
  log(
    `chaos: replica promoted ${promotedAfter} ms after the kill; killed node back as its replica, ` +
      `in sync ${Date.now() - killedAt} ms after the kill`,
  );
}

function spawnWorker(slot: number): Promise<void> {
  const child = fork(new URL('./worker.ts', import.meta.url), {
    env: {
      ...process.env,
      REDIS_URL: redisHandle.url,
      CHAOS_PREFIX: prefix,
      CHAOS_DROP: String(dropRate),
      CHAOS_DOORBELL_QUEUES: String(doorbellQueues),
    },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  workers[slot] = child;
  return new Promise((resolve) => child.once('message', () => resolve()));
}

const threads = Array.from({ length: threadCount }, (_, i) => `chaos:${i % 7}:thread:${i}`);
// Acceptance order is the stream id enqueue returns, not the order replies resolve in (ringing takes
// longer); a refused message retried as a duplicate has the stream id of the delivery that stored it.
const sent = new Map<string, { id: string; at: [number, number] }[]>(threads.map((t) => [t, []]));
let producing = true;

const streamPosition = (id: string): [number, number] => {
  const [ms, n] = id.split('-');
  return [Number(ms), Number(n)];
};
const byStreamPosition = (a: { at: [number, number] }, b: { at: [number, number] }) =>
  a.at[0] - b.at[0] || a.at[1] - b.at[1];

/**
 * Sends one message as a platform would: a refusal (no acknowledgement) is retried with the same id
 * until it is acknowledged, as new or as a duplicate of a delivery that was stored but not confirmed.
 */
async function send(thread: string, id: string): Promise<void> {
  for (;;) {
    const started = performance.now();
    try {
      const result = await ingress.intake.enqueue(thread, { id, body: JSON.stringify({ thread, id }) });
      if (result.outcome === 'gated') throw new Error('an ungated enqueue was gated');
      ackMs.push(performance.now() - started);
      sent.get(thread)!.push({ id, at: streamPosition(result.streamId) });
      return;
    } catch (error) {
      stats.refused++;
      if (!isRedisUnavailable(error)) {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        internalErrors.set(message, (internalErrors.get(message) ?? 0) + 1);
      }
      await sleep(50);
    }
  }
}

async function produce(producer: number, producers: number): Promise<void> {
  let n = 0;
  while (producing) {
    const thread = threads[Math.floor(Math.random() * threads.length)]!;
    // A message counts as sent only once enqueue acknowledged it, as ingress would answer 2xx.
    await send(thread, `p${producer}-${n++}`);
    await sleep((-Math.log(1 - Math.random()) * (1000 * producers)) / rate);
  }
}

async function wreak(): Promise<void> {
  while (producing) {
    await sleep(between(500, 2_500));
    if (!producing) return;
    const slot = Math.floor(Math.random() * workerCount);
    const victim = workers[slot];
    if (!victim?.pid) continue;
    if (Math.random() < 0.5) {
      stats.kills++;
      victim.kill('SIGKILL');
      await sleep(between(100, 1_000));
      await spawnWorker(slot);
    } else {
      stats.freezes++;
      victim.kill('SIGSTOP');
      await sleep(between(300, 4_000));
      victim.kill('SIGCONT');
    }
  }
}

const totalSent = () => [...sent.values()].reduce((sum, ids) => sum + ids.length, 0);

async function settled(): Promise<boolean> {
  const states = await Promise.all(threads.map((t) => queue.admin.state(t)));
  return states.every((s) => s.status === 'idle' && s.backlog === 0);
}

await Promise.all(Array.from({ length: workerCount }, (_, slot) => spawnWorker(slot)));
log(
  `chaos: ${workerCount} workers, ${threadCount} threads, ~${rate} msg/s, drop=${dropRate}, ${seconds}s` +
    (onCluster ? `, Redis Cluster of 3 primaries, ${doorbellQueues} doorbell queues` : '') +
    (values.failover ? ', a replica each, one primary killed halfway' : '') +
    `, REDIS_ACK_REPLICAS=${config.ackReplicas}`,
);
const started = Date.now();
const progress = setInterval(() => {
  const elapsed = Math.round((Date.now() - started) / 1000);
  log(
    `chaos: t=${elapsed}s sent=${totalSent()} kills=${stats.kills} freezes=${stats.freezes} dropped_doorbells=${doorbell.dropped}`,
  );
}, 5_000);

const producers = 8;
const running = [
  ...Array.from({ length: producers }, (_, p) => produce(p, producers)),
  wreak(),
  ...(values.failover ? [failOver()] : []),
];
await sleep(seconds * 1000);
producing = false;
await Promise.all(running);
clearInterval(progress);
for (const child of workers) child?.kill('SIGCONT');

log('chaos: producers stopped; waiting for every thread to drain');
await waitFor(settled, { timeoutMs: 120_000, intervalMs: 250, what: 'all threads idle and empty' }).catch(
  (error) => log(`chaos: ${error.message}`),
);

let tally: Tally = { committed: 0, lost: 0, duplicates: 0, reordered: 0, overlapsCommitted: 0 };
let dead = 0;
for (const thread of threads) {
  const history = (await queue.admin.history(thread, Number.MAX_SAFE_INTEGER)).reverse();
  const accepted = sent.get(thread)!.sort(byStreamPosition);
  tally = addTallies(
    tally,
    tallyThread(
      accepted.map((m) => m.id),
      history,
    ),
  );
  dead += (await queue.admin.deadLetters(thread)).length;
}

await Promise.all(
  workers.map((child) =>
    child?.exitCode === null
      ? new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'))
      : undefined,
  ),
);
await bull.close();
redis.disconnect();
intake.disconnect();
await redisHandle.stop();

const errors500 = [...internalErrors.values()].reduce((sum, n) => sum + n, 0);
for (const [message, count] of internalErrors) log(`chaos: ${count} x 500: ${message}`);

log(
  `chaos: kills=${stats.kills} freezes=${stats.freezes} dropped_doorbells=${doorbell.dropped} refused=${stats.refused} dead_letters=${dead}` +
    (values.failover ? ` failovers=${stats.failedOver}` : ''),
);
log(
  `chaos: acknowledgement per message (REDIS_ACK_REPLICAS=${config.ackReplicas}): ` +
    `p50 ${percentile(ackMs, 50).toFixed(2)} ms, p95 ${percentile(ackMs, 95).toFixed(2)} ms; ` +
    'npm run bench:replica-ack compares it with acknowledging without a replica',
);
process.stdout.write(
  `chaos: sent=${totalSent()} committed=${tally.committed} lost=${tally.lost} duplicates=${tally.duplicates} ` +
    `reordered=${tally.reordered} overlaps_committed=${tally.overlapsCommitted} errors_500=${errors500}\n`,
);
const clean = tally.lost + tally.duplicates + tally.reordered + tally.overlapsCommitted + errors500 === 0;
process.exit(clean ? 0 : 1);
