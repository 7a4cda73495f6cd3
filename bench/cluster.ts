/**
 * End-to-end throughput on one Redis vs a 3-primary Redis Cluster: producers enqueue to many threads,
 * turn runners (no agent: an empty turn) claim, commit and drain, until every message is committed.
 * Rounds alternate between the two set-ups in one run; each prints messages/s and Redis commands per
 * message (every server's INFO commandstats, BullMQ's polling included), and the ratios at the end.
 *
 *   npm run bench:cluster [-- --messages 4000 --threads 200 --rounds 3 --runners 3] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { BullDoorbell, openConnection, queueConfig, Runner, threadQueue } from '@tributary/queue';
import { type RedisHandle, startRedis, startRedisCluster, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { median, rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    messages: { type: 'string' },
    threads: { type: 'string' },
    rounds: { type: 'string' },
    runners: { type: 'string' },
  },
});
const messages = sizeOption(values, 'messages', 4000, 300);
const threadCount = sizeOption(values, 'threads', 200, 30);
const rounds = sizeOption(values, 'rounds', 3, 1);
const runnerCount = sizeOption(values, 'runners', 3);
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Setup {
  label: string;
  handle: RedisHandle;
  /** Every server that serves commands, for INFO commandstats. */
  servers: string[];
  doorbellQueues: number;
}

/** Commands served so far, summed over every server. */
async function commandsServed(servers: string[]): Promise<number> {
  let total = 0;
  for (const url of servers) {
    const client = new Redis(url);
    const stats = await client.info('commandstats');
    client.disconnect();
    for (const match of stats.matchAll(/calls=(\d+)/g)) total += Number(match[1]);
  }
  return total;
}

async function round(setup: Setup): Promise<{ perSecond: number; commandsPerMessage: number }> {
  const redis = openConnection(setup.handle.url, { kind: 'patient' });
  const config = queueConfig({
    prefix: uniquePrefix('bench'),
    doorbellQueues: setup.doorbellQueues,
    affinity: false,
  });
  const doorbell = new BullDoorbell(redis, config);
  const queue = threadQueue(redis, config, doorbell);
  let committed = 0;
  const runners = Array.from(
    { length: runnerCount },
    () =>
      new Runner({
        queue,
        doorbell,
        connection: redis,
        replies: {
          deliver: async ({ id }) => Promise.reject(new Error(`reply ${id}: these turns commit no replies`)),
        },
        concurrency: 8,
        sweep: false,
        handler: async (batch) => {
          committed += batch.messages.length;
          return { reply: 'ok', stopReason: 'end_turn' };
        },
      }),
  );
  for (const runner of runners) await runner.start();
  await queue.ensureScripts();
  const before = await commandsServed(setup.servers);
  const started = performance.now();
  const producers = 16;
  await Promise.all(
    Array.from({ length: producers }, async (_, p) => {
      for (let i = p; i < messages; i += producers) {
        await queue.intake.enqueue(`bench:${i % threadCount}`, { id: `m${i}`, body: 'ping' });
      }
    }),
  );
  await waitFor(() => committed >= messages, {
    what: 'every message committed',
    timeoutMs: 300_000,
    intervalMs: 5,
  });
  const seconds = (performance.now() - started) / 1000;
  const commands = (await commandsServed(setup.servers)) - before;
  for (const runner of runners) await runner.close();
  await doorbell.close();
  redis.disconnect();
  return { perSecond: messages / seconds, commandsPerMessage: commands / messages };
}

const single = await startRedis({ private: true });
const cluster = await startRedisCluster();
const setups: Setup[] = [
  { label: 'one node', handle: single, servers: [single.url], doorbellQueues: 1 },
  {
    label: '3-primary cluster',
    handle: cluster,
    servers: cluster.nodes.map((n) => n.url),
    doorbellQueues: 3,
  },
];
const results = new Map<string, { perSecond: number[]; commandsPerMessage: number[] }>(
  setups.map((s) => [s.label, { perSecond: [], commandsPerMessage: [] }]),
);
for (let r = 0; r < rounds; r++) {
  for (const setup of r % 2 === 0 ? setups : [...setups].reverse()) {
    const result = await round(setup);
    const into = results.get(setup.label)!;
    into.perSecond.push(result.perSecond);
    into.commandsPerMessage.push(result.commandsPerMessage);
    log(
      `cluster-bench: round ${r + 1} ${setup.label}: ${result.perSecond.toFixed(0)} msg/s, ` +
        `${result.commandsPerMessage.toFixed(1)} commands/msg`,
    );
  }
}
await single.stop();
await cluster.stop();

const figures = (label: string) => {
  const runs = results.get(label)!;
  return { perSecond: median(runs.perSecond), commands: median(runs.commandsPerMessage) };
};
const one = figures('one node');
const many = figures('3-primary cluster');
const columns = ['Redis', 'messages/s', 'commands per message'];
const rows = [
  ['one node (baseline)', Math.round(one.perSecond), rounded(one.commands, 1)],
  ['3-primary cluster', Math.round(many.perSecond), rounded(many.commands, 1)],
];
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'cluster',
  title: 'Throughput on one Redis against a 3-primary Redis Cluster',
  columns,
  rows,
  ratios: {
    cluster_over_one_node_messages_per_second: rounded(many.perSecond / one.perSecond),
    cluster_over_one_node_commands_per_message: rounded(many.commands / one.commands),
  },
  charts: [
    { title: 'Messages per second', x: 'Redis', y: 'messages/s' },
    { title: 'Redis commands per message', x: 'Redis', y: 'commands per message' },
  ],
  notes: [
    `${messages} messages over ${threadCount} threads from 16 producers, ${runnerCount} in-process turn runners with an empty turn, until every message is committed; median of ${rounds} rounds, the order of the set-ups alternating.`,
    "Commands: every server's INFO commandstats, BullMQ's polling included; the cluster runs one doorbell queue per primary.",
  ],
});
