/**
 * The Redis commands one whole turn costs, by command name: a message enqueued as ingress does, rung,
 * claimed and committed with a one-part reply by a worker's turn runner, and the reply delivered from
 * the outbox as the worker's delivery does (take, read the parts posted, record the part, done). The
 * turns run one after another on a private redis-server, in two cases: each on a thread never seen
 * (a new conversation) and all on one thread (a conversation going on). Counts come from
 * `INFO commandstats`, reset with `CONFIG RESETSTAT` before each case; what the idle processes send in
 * the same time (BullMQ's blocking waits, presence) is measured apart and taken off.
 *
 *   npm run bench:redis-commands [-- --turns 200] [-- --smoke]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { type QueueConfig, Store } from '@tributary/queue';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, turns: { type: 'string' } } });
const turns = sizeOption(values, 'turns', 200, 20);
const log = (line: string) => process.stderr.write(`${line}\n`);

const server = await startRedis({ private: true });
const stats = new Redis(server.url);
const queue: Partial<QueueConfig> = { prefix: uniquePrefix('commands') };
// Two processes' worth of connections, as deployed: ingress enqueues, the worker runs and delivers.
const ingress = Store.open({ url: server.url, connection: { kind: 'fail-fast', timeoutMs: 1_000 }, queue });
const worker = Store.open({ url: server.url, connection: { kind: 'patient' }, queue });
await ingress.whenReady(5_000);

const OWNER = 'bench-worker';
const LOCK_MS = 120_000;
const delivered = new Map<string, () => void>();

/** A one-part reply delivered as ReplyDelivery and PlatformReplySink deliver it. */
async function deliver(thread: string): Promise<void> {
  const take = await worker.replies.take(thread, OWNER, LOCK_MS);
  if (take.kind !== 'reply') throw new Error(`the outbox of ${thread} answered ${take.kind}`);
  const { id } = take.reply;
  await worker.replies.postedParts(thread, id);
  await worker.replies.recordPart(thread, id, 0, `posted-${id}`);
  const after = await worker.replies.done(thread, OWNER, id);
  if (after !== 'empty') throw new Error(`the outbox of ${thread} answered ${after} after its one reply`);
}

// The sweeper's pass is per interval, not per turn: it is left out.
const runner = worker.turnRunner({
  owner: OWNER,
  sweep: false,
  handler: async (batch) => ({
    reply: 'done',
    stopReason: 'end_turn',
    outbound: [{ id: `${batch.id}:reply`, payload: JSON.stringify({ kind: 'reply', text: 'done' }) }],
  }),
  events: {
    batchEnded(outcome, thread) {
      if (outcome !== 'committed') throw new Error(`a turn of ${thread} ended ${outcome}`);
      deliver(thread).then(
        () => delivered.get(thread)?.(),
        (error: unknown) => log(`redis-commands: delivery failed: ${String(error)}`),
      );
    },
  },
});
await runner.start();

/** Calls per command name since the last reset, without the measuring client's own. */
async function commandCalls(): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await stats.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = match[1]!;
    if (name !== 'info' && !name.startsWith('config')) calls.set(name, Number(match[2]));
  }
  return calls;
}

/** Runs `count` turns one after another; returns the calls they cost and how long they took. */
async function measure(count: number, threadOf: (turn: number) => string) {
  await stats.config('RESETSTAT');
  const started = performance.now();
  for (let turn = 0; turn < count; turn++) {
    const thread = threadOf(turn);
    const done = new Promise<void>((resolve) => delivered.set(thread, resolve));
    await ingress.queue.enqueue(thread, {
      id: `m${turn}`,
      body: 'check the build',
      idempotencyKey: `${thread}:m${turn}`,
    });
    await done;
  }
  const ms = performance.now() - started;
  return { calls: await commandCalls(), ms };
}

/** What the idle processes send in `ms`, per ms, by command. */
async function background(ms: number): Promise<Map<string, number>> {
  await stats.config('RESETSTAT');
  await sleep(ms);
  const calls = await commandCalls();
  return new Map([...calls].map(([name, n]) => [name, n / ms]));
}

const cases = [
  { name: 'new thread', threadOf: (turn: number) => `gateway:C1:new-${turn}` },
  { name: 'same thread', threadOf: () => 'gateway:C1:ongoing' },
];
const perTurn = new Map<string, Map<string, number>>();
const idleShare = new Map<string, number>();
try {
  // One turn first, so scripts are loaded and connections open before anything is counted.
  await measure(1, () => 'gateway:C1:warm-up');
  for (const { name, threadOf } of cases) {
    const { calls, ms } = await measure(turns, threadOf);
    const idle = await background(ms);
    const net = new Map<string, number>();
    let idleTotal = 0;
    for (const command of new Set([...calls.keys(), ...idle.keys()])) {
      const idleCalls = (idle.get(command) ?? 0) * ms;
      idleTotal += idleCalls;
      net.set(command, Math.max(0, (calls.get(command) ?? 0) - idleCalls) / turns);
    }
    perTurn.set(name, net);
    idleShare.set(name, idleTotal / turns);
    log(`redis-commands: ${name}: ${turns} turns in ${ms.toFixed(0)} ms`);
  }
} finally {
  await runner.close();
  await ingress.close();
  await worker.close();
  stats.disconnect();
  await server.stop();
}

const total = (name: string) => [...perTurn.get(name)!.values()].reduce((a, b) => a + b, 0);
const commands = [...new Set(cases.flatMap(({ name }) => [...perTurn.get(name)!.keys()]))]
  // Less than 0.05 a turn is what is left of the idle traffic once taken off, not the turn's.
  .filter((command) => cases.some(({ name }) => perTurn.get(name)!.get(command)! >= 0.05))
  .sort(
    (a, b) => perTurn.get('new thread')!.get(b)! - perTurn.get('new thread')!.get(a)! || a.localeCompare(b),
  );
const columns = ['command', ...cases.map(({ name }) => `per turn, ${name}`)];
const rows = [
  ...commands.map((command) => [
    command,
    ...cases.map(({ name }) => rounded(perTurn.get(name)!.get(command) ?? 0)),
  ]),
  ['total', ...cases.map(({ name }) => rounded(total(name)))],
];
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
const evalsha = (name: string) => perTurn.get(name)!.get('evalsha') ?? 0;
process.stdout.write(
  `redis-commands: ${rounded(total('new thread'), 1)} commands per turn on a new thread ` +
    `(${rounded(evalsha('new thread'), 1)} of them script calls), ${rounded(total('same thread'), 1)} on a thread going on\n`,
);
const path = await writeBenchResult(values, {
  name: 'redis-commands',
  title: 'Redis commands per whole turn, by command: enqueue, ring, claim, commit with a reply, delivery',
  columns,
  rows,
  ratios: {
    commands_per_turn_new_thread: rounded(total('new thread'), 1),
    commands_per_turn_same_thread: rounded(total('same thread'), 1),
    script_calls_per_turn_new_thread: rounded(evalsha('new thread'), 1),
    script_calls_per_turn_same_thread: rounded(evalsha('same thread'), 1),
  },
  notes: [
    `${turns} turns per case, one after another, on a private redis-server: ingress's store enqueues, a worker's turn runner (sweeper off) claims and commits a one-part reply, and the reply is delivered as the worker does: take, read the posted parts, record the part, done.`,
    'Counts are INFO commandstats after CONFIG RESETSTAT, without the measuring INFO and CONFIG. Redis counts the commands a script runs as well as its EVALSHA: the EVALSHA row is the script calls, the rest mostly runs inside them.',
    `What the idle processes send in the same time (BullMQ's blocking waits, presence refreshes) is measured right after each case and taken off: ${rounded(idleShare.get('new thread')!, 2)} and ${rounded(idleShare.get('same thread')!, 2)} commands per turn.`,
    'Round trips are not counted: auto-pipelining sends the commands of one tick in one write, so they are fewer than the commands.',
    'The agent side of a real worker (session records, progress reactions) and the sweeper pass are not in these figures.',
  ],
});
log(`redis-commands: wrote ${path}`);
