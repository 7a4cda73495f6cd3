/**
 * The Redis commands one whole turn costs, by command name, and the client calls among them: a message
 * enqueued as ingress does, rung, claimed and committed with a one-part reply by a worker's runner, and
 * the reply delivered from the outbox by the runner's reply loop to a platform that takes it. The
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
let delivered: (() => void) | undefined;

// The sweeper's pass is per interval, not per turn: it is left out. The reply goes to a platform that
// takes it at once, through the runner's own reply loop, as in a worker.
const runner = worker.runner({
  owner: OWNER,
  sweep: false,
  handler: async (batch) => ({
    reply: 'done',
    stopReason: 'end_turn',
    outbound: [{ id: `${batch.id}:reply`, payload: JSON.stringify({ kind: 'reply', text: 'done' }) }],
  }),
  replies: { deliver: async ({ id }) => ({ part: 0, messageId: `posted-${id}` }) },
  events: {
    batchEnded(outcome, thread) {
      if (outcome !== 'committed') log(`redis-commands: a turn of ${thread} ended ${outcome}`);
    },
    // Turns run one at a time: the reply delivered is the last turn's.
    replyDelivery(outcome) {
      if (outcome === 'delivered') delivered?.();
      else log(`redis-commands: a delivery ended ${outcome}`);
    },
  },
});
await runner.start();

/** Client calls by command name (what left a client; a script's own commands are not among them). */
const clientCalls = new Map<string, number>();
const monitor = await stats.monitor();
monitor.on('monitor', (_time: string, args: string[], source: string) => {
  const name = args[0]?.toLowerCase() ?? '';
  if (source === 'lua' || name === 'info' || name === 'config') return;
  clientCalls.set(name, (clientCalls.get(name) ?? 0) + 1);
});

/** Calls per command name since the last reset, without the measuring client's own. */
async function commandCalls(): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await stats.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = match[1]!;
    if (name !== 'info' && !name.startsWith('config')) calls.set(name, Number(match[2]));
  }
  return calls;
}

/** Runs `count` turns one after another; returns the commands and client calls they cost, and the time. */
async function measure(count: number, threadOf: (turn: number) => string) {
  await stats.config('RESETSTAT');
  clientCalls.clear();
  const started = performance.now();
  for (let turn = 0; turn < count; turn++) {
    const thread = threadOf(turn);
    const done = new Promise<void>((resolve) => {
      delivered = resolve;
    });
    await ingress.queue.intake.enqueue(thread, {
      id: `m${turn}`,
      body: 'check the build',
      idempotencyKey: `${thread}:m${turn}`,
    });
    await done;
  }
  const ms = performance.now() - started;
  return { calls: await commandCalls(), clients: new Map(clientCalls), ms };
}

/** What the idle processes send in `ms`, per ms: commands, and client calls. */
async function background(ms: number) {
  await stats.config('RESETSTAT');
  clientCalls.clear();
  await sleep(ms);
  const perMs = (calls: Map<string, number>) => new Map([...calls].map(([name, n]) => [name, n / ms]));
  return { calls: perMs(await commandCalls()), clients: perMs(clientCalls) };
}

/** Per turn, by name: what `count` turns cost in `ms`, less what the idle processes send in that time. */
function netPerTurn(calls: Map<string, number>, idle: Map<string, number>, ms: number) {
  const net = new Map<string, number>();
  let idleTotal = 0;
  for (const name of new Set([...calls.keys(), ...idle.keys()])) {
    const idleCalls = (idle.get(name) ?? 0) * ms;
    idleTotal += idleCalls;
    net.set(name, Math.max(0, (calls.get(name) ?? 0) - idleCalls) / turns);
  }
  return { net, idle: idleTotal / turns };
}

const cases = [
  { name: 'new thread', threadOf: (turn: number) => `gateway:C1:new-${turn}` },
  { name: 'same thread', threadOf: () => 'gateway:C1:ongoing' },
];
const perTurn = new Map<string, Map<string, number>>();
const clientsPerTurn = new Map<string, Map<string, number>>();
const idleShare = new Map<string, number>();
try {
  // One turn first, so scripts are loaded and connections open before anything is counted.
  await measure(1, () => 'gateway:C1:warm-up');
  for (const { name, threadOf } of cases) {
    const { calls, clients, ms } = await measure(turns, threadOf);
    const idle = await background(ms);
    const commands = netPerTurn(calls, idle.calls, ms);
    perTurn.set(name, commands.net);
    clientsPerTurn.set(name, netPerTurn(clients, idle.clients, ms).net);
    idleShare.set(name, commands.idle);
    log(`redis-commands: ${name}: ${turns} turns in ${ms.toFixed(0)} ms`);
  }
} finally {
  await runner.close();
  await ingress.close();
  await worker.close();
  monitor.disconnect();
  stats.disconnect();
  await server.stop();
}

const sum = (calls: Map<string, number>) => [...calls.values()].reduce((a, b) => a + b, 0);
const total = (name: string) => sum(perTurn.get(name)!);
const clientTotal = (name: string) => sum(clientsPerTurn.get(name)!);
/** Less than 0.05 a turn is what is left of the idle traffic once taken off, not the turn's. */
const turnsOwn = (table: Map<string, Map<string, number>>) =>
  [...new Set(cases.flatMap(({ name }) => [...table.get(name)!.keys()]))]
    .filter((command) => cases.some(({ name }) => table.get(name)!.get(command)! >= 0.05))
    .sort(
      (a, b) => table.get('new thread')!.get(b)! - table.get('new thread')!.get(a)! || a.localeCompare(b),
    );
const columns = ['command', ...cases.map(({ name }) => `per turn, ${name}`)];
const rowsOf = (table: Map<string, Map<string, number>>, label: string) =>
  turnsOwn(table).map((command) => [
    `${label}${command}`,
    ...cases.map(({ name }) => rounded(table.get(name)!.get(command) ?? 0)),
  ]);
const rows = [
  ...rowsOf(perTurn, ''),
  ['total', ...cases.map(({ name }) => rounded(total(name)))],
  ...rowsOf(clientsPerTurn, 'client call: '),
  ['client calls', ...cases.map(({ name }) => rounded(clientTotal(name)))],
];
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
const evalsha = (name: string) => perTurn.get(name)!.get('evalsha') ?? 0;
process.stdout.write(
  `redis-commands: ${rounded(total('new thread'), 1)} commands per turn on a new thread ` +
    `(${rounded(evalsha('new thread'), 1)} of them script calls) in ${rounded(clientTotal('new thread'), 1)} client calls, ` +
    `${rounded(total('same thread'), 1)} on a thread going on in ${rounded(clientTotal('same thread'), 1)}\n`,
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
    client_calls_per_turn_new_thread: rounded(clientTotal('new thread'), 1),
    client_calls_per_turn_same_thread: rounded(clientTotal('same thread'), 1),
  },
  notes: [
    `${turns} turns per case, one after another, on a private redis-server: ingress's store enqueues, a worker's runner (sweeper off) claims and commits a one-part reply, and its reply loop delivers the reply to a sink that takes it at once (the loop's take locks it, the done records its one part).`,
    'Counts are INFO commandstats after CONFIG RESETSTAT, without the measuring INFO and CONFIG. Redis counts the commands a script runs as well as its EVALSHA: the EVALSHA row is the script calls, the rest mostly runs inside them.',
    'Client calls (rows "client call: ...") are what MONITOR shows leaving the clients, the commands scripts run left out: the calls a turn makes, each one a round trip.',
    `What the idle processes send in the same time (BullMQ's blocking waits, presence refreshes) is measured right after each case and taken off: ${rounded(idleShare.get('new thread')!, 2)} and ${rounded(idleShare.get('same thread')!, 2)} commands per turn.`,
    'The agent side of a real worker (session records, progress reactions) and the sweeper pass are not in these figures.',
  ],
});
log(`redis-commands: wrote ${path}`);
