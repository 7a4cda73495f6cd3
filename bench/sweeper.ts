/**
 * The sweeper's look at a waiting thread's doorbell (issue: broker cost), with B doorbells waiting in
 * the queue: `BullDoorbell.pending` (the job's own hash) against BullMQ's `getJobState` (what it used,
 * an LPOS over the wait list), interleaved on the same queue. Prints the Redis CPU and wall time per
 * look for each backlog and their ratio.
 *
 *   npm run bench:sweeper [-- --looks 500] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { BullDoorbell, doorbellJobId, queueDefaults } from '@tributary/queue';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { redisCpuMs } from './redis-cpu.js';
import { rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, looks: { type: 'string' } } });
const looks = sizeOption(values, 'looks', 500, 50);
const BACKLOGS = values.smoke ? [100, 1_000] : [1_000, 10_000, 50_000];

const server = await startRedis({ private: true });
const redis = new Redis(server.url);

/** Redis's CPU so far, in µs. */
const redisCpuUs = async () => (await redisCpuMs(redis)) * 1000;

async function measure(look: (i: number) => Promise<unknown>): Promise<{ redisUs: number; wallUs: number }> {
  const cpu = await redisCpuUs();
  const started = performance.now();
  for (let i = 0; i < looks; i++) await look(i);
  return {
    wallUs: ((performance.now() - started) * 1000) / looks,
    redisUs: ((await redisCpuUs()) - cpu) / looks,
  };
}

const rows: Cell[][] = [];
const ratios: Record<string, number> = {};
try {
  for (const backlog of BACKLOGS) {
    const doorbell = new BullDoorbell(redis, {
      prefix: uniquePrefix('bench-sweeper'),
      buckets: queueDefaults.buckets,
      doorbellQueues: 1,
    });
    for (let from = 0; from < backlog; from += 1000) {
      await doorbell.queues()[0]!.addBulk(
        Array.from({ length: Math.min(1000, backlog - from) }, (_, i) => ({
          name: 'ring',
          data: { thread: `t${from + i}`, epoch: 1 },
          opts: { jobId: doorbellJobId(`t${from + i}`, 1) },
        })),
      );
    }
    // The threads a sweep looks at have waited longest: the oldest jobs, at the far end of the list.
    const member = (i: number) => `t${i % Math.min(backlog, 1000)}`;
    const state = await measure((i) => doorbell.queues()[0]!.getJobState(doorbellJobId(member(i), 1)));
    const hash = await measure((i) => doorbell.pending(member(i), 1));
    rows.push(
      [backlog, 'getJobState (baseline)', rounded(state.redisUs, 1), Math.round(state.wallUs)],
      [backlog, 'BullDoorbell.pending', rounded(hash.redisUs, 1), Math.round(hash.wallUs)],
    );
    ratios[`getjobstate_over_pending_redis_cpu_at_${backlog}`] = rounded(state.redisUs / hash.redisUs, 1);
    await doorbell.queues()[0]!.obliterate({ force: true });
    await doorbell.close();
  }
} finally {
  redis.disconnect();
  await server.stop();
}
const columns = ['waiting', 'look', 'Redis µs', 'wall µs'];
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'sweeper',
  title: "The sweeper's look at a waiting doorbell",
  columns,
  rows,
  ratios,
  charts: [{ title: 'Redis CPU per look (µs)', x: 'waiting', y: 'Redis µs', group: 'look' }],
  notes: [
    `${looks} looks per backlog at the oldest waiting doorbells; Redis µs from INFO cpu, wall µs is the round trip.`,
    'getJobState is what the sweeper used before (an LPOS over the wait list); pending reads the job’s own hash.',
  ],
});
