/**
 * What acknowledging only after a replica holds a message costs per message: enqueue on a 3-primary
 * Redis Cluster with a replica each, `REDIS_ACK_REPLICAS=0` (the baseline: acknowledged once the
 * primary has it) against the default `auto` (WAIT for one replica), rounds alternating in one run.
 * Producers send one message at a time and wait for its acknowledgement, as a platform awaits each
 * webhook's answer. Prints the acknowledgement time per message, messages/s and Redis commands per
 * message (the primaries' INFO commandstats).
 *
 *   npm run bench:replica-ack [-- --messages 3000 --rounds 3 --producers 8] [-- --smoke]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { type QueueConfig, ReplicationLagError, Store, type ThreadQueue } from '@tributary/queue';
import { startRedisCluster, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { median, percentile, rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    messages: { type: 'string' },
    rounds: { type: 'string' },
    producers: { type: 'string' },
  },
});
const messages = sizeOption(values, 'messages', 3000, 200);
const rounds = sizeOption(values, 'rounds', 3, 1);
const producers = sizeOption(values, 'producers', 8, 4);
const log = (line: string) => process.stderr.write(`${line}\n`);

const cluster = await startRedisCluster({ replicas: 1 });

async function commandsServed(): Promise<number> {
  let total = 0;
  for (const node of await cluster.primaries()) {
    const client = new Redis(node.url);
    const stats = await client.info('commandstats');
    client.disconnect();
    for (const match of stats.matchAll(/calls=(\d+)/g)) total += Number(match[1]);
  }
  return total;
}

/**
 * An enqueue as a platform makes it: ingress answers a replica that lags past the acknowledgement
 * timeout with 503, and the platform sends the same message again, later (dedup makes it one). On a
 * loaded machine a replica still catching up lags now and then, for longer than a few immediate
 * retries cover; that is a retry, not the end of the run.
 */
async function deliver(queue: ThreadQueue, thread: string, id: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await queue.intake.enqueue(thread, { id, body: 'ping' });
      return;
    } catch (error) {
      if (!(error instanceof ReplicationLagError) || attempt === 8) throw error;
      lagRetries++;
      // Backing off as a platform does: 50 ms doubling, about 6 s over all eight attempts.
      await sleep(50 * 2 ** (attempt - 1));
    }
  }
}
let lagRetries = 0;

interface Round {
  ackMs: number[];
  perSecond: number;
  commandsPerMessage: number;
}

async function round(ackReplicas: QueueConfig['ackReplicas']): Promise<Round> {
  // Ingress's connection profile: a refused acknowledgement would be an error here, not a wait.
  const store = Store.open({
    url: cluster.url,
    connection: { kind: 'fail-fast', timeoutMs: 1_000 },
    queue: { prefix: uniquePrefix('ack'), doorbellQueues: 3, ackReplicas },
  });
  await store.whenReady(5_000);
  await store.ready();
  const { queue } = store;
  // One message first, so the round starts with the topology known and the connections open.
  await deliver(queue, 'bench:warm', 'warm');
  const ackMs: number[] = [];
  const before = await commandsServed();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async (_, p) => {
      for (let i = p; i < messages; i += producers) {
        const sent = performance.now();
        await deliver(queue, `bench:${i % 200}`, `m${i}`);
        ackMs.push(performance.now() - sent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const commands = (await commandsServed()) - before;
  await store.close();
  return { ackMs, perSecond: messages / seconds, commandsPerMessage: commands / messages };
}

const settings = [
  { label: 'REDIS_ACK_REPLICAS=0 (baseline)', ackReplicas: 0 },
  { label: 'auto (default: WAIT 1)', ackReplicas: 'auto' as const },
];
const runs = new Map(settings.map((s) => [s.label, [] as Round[]]));
for (let r = 0; r < rounds; r++) {
  for (const setting of r % 2 === 0 ? settings : [...settings].reverse()) {
    const result = await round(setting.ackReplicas);
    runs.get(setting.label)!.push(result);
    log(
      `replica-ack: round ${r + 1} ${setting.label}: p50 ${median(result.ackMs).toFixed(2)} ms, ` +
        `${result.perSecond.toFixed(0)} msg/s, ${result.commandsPerMessage.toFixed(1)} commands/msg`,
    );
  }
}
await cluster.stop();

const figures = (label: string) => {
  const all = runs.get(label)!;
  const ackMs = all.flatMap((r) => r.ackMs);
  return {
    p50: median(ackMs),
    p95: percentile(ackMs, 95),
    perSecond: median(all.map((r) => r.perSecond)),
    commands: median(all.map((r) => r.commandsPerMessage)),
  };
};
const off = figures(settings[0]!.label);
const auto = figures(settings[1]!.label);
const columns = ['acknowledgement', 'p50 ms', 'p95 ms', 'messages/s', 'commands per message'];
const rows = [off, auto].map((f, i) => [
  settings[i]!.label,
  rounded(f.p50, 2),
  rounded(f.p95, 2),
  Math.round(f.perSecond),
  rounded(f.commands, 1),
]);
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
const signed = (value: number, digits: number) => `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
process.stdout.write(
  `replica-ack: cost per message: ${signed(auto.p50 - off.p50, 2)} ms at p50, ` +
    `${signed(auto.p95 - off.p95, 2)} ms at p95, ${signed(auto.commands - off.commands, 1)} Redis commands\n`,
);
await writeBenchResult(values, {
  name: 'replica-ack',
  title: 'Acknowledging after a replica holds the message',
  columns,
  rows,
  ratios: {
    auto_over_off_ack_p50: rounded(auto.p50 / off.p50),
    auto_over_off_messages_per_second: rounded(auto.perSecond / off.perSecond),
    added_ms_per_message_p50: rounded(auto.p50 - off.p50, 3),
  },
  charts: [{ title: 'Acknowledgement time p50', x: 'acknowledgement', y: 'p50 ms' }],
  notes: [
    `${messages} messages per round over 200 threads from ${producers} producers that each await every acknowledgement; a 3-primary Redis Cluster with one replica per primary on this machine's loopback; median of ${rounds} rounds, the order alternating.`,
    'Commands: the primaries’ INFO commandstats (the WAIT, and the INFO replication read at most once a second per primary, included).',
    `A replica lagging past the acknowledgement timeout is retried as a platform retries a 503; an acknowledgement's time includes its retries (${lagRetries} in this run).`,
  ],
});
