/**
 * A new thread's wait for its agent (docs/adr/0037, docs/adr/0041, docs/adr/0044): from the moment its
 * first message is acknowledged (the enqueue script answered, as ingress's 2xx) to the moment the
 * prompt reaches the agent process (the built-in agent logs each prompt with its arrival time), on a
 * worker with warm spares and on one without, with the agents in bubblewrap sandboxes and without,
 * the four taking turns sample by sample; and how long each agent took to start (spawn to its
 * `initialize` answer). Each sample is a thread the worker has
 * never seen, sent when the worker is idle (its previous turn committed, its spare replaced), as a
 * quiet fleet meets a new conversation. Then a burst: `--burst` new threads at once on a worker with a
 * turn slot for each, whose agent starts take turns (AGENT_START_CONCURRENCY, one per CPU): what each
 * start waited for its turn is reported beside the first-prompt times. Then new threads one after
 * another (`--serial`, each sent as soon as the previous one's prompt reached its agent), sandboxed, in
 * two rounds a minute apart at most: on a worker that keeps one spare, and on workers whose spares
 * grow with the threads that found none ready (docs/adr/0047), within the shipped memory budget and a
 * large one. Also prints what one spare costs: the PSS of an idle agent process.
 *
 *   npm run bench:first-prompt [-- --samples 40] [-- --burst 40] [-- --serial 40] [-- --smoke]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { agentDefaults } from '@tributary/acp';
import { agentMemory } from '@tributary/acp/process-memory';
import { builtInAgentCommand } from '@tributary/agent';
import { loadWorkerConfig } from '@tributary/config';
import { queuedArrival } from '@tributary/packing';
import { startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { type RunningWorker, startWorker } from '@tributary/worker';
import { pino } from 'pino';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { percentile, rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    samples: { type: 'string' },
    burst: { type: 'string' },
    serial: { type: 'string' },
  },
});
const samples = sizeOption(values, 'samples', 40, 4);
// A smoke's burst still outnumbers the starts a worker runs at once, so some wait their turn.
const burst = sizeOption(values, 'burst', 40, 2 * agentDefaults.startConcurrency() + 2);
const serial = sizeOption(values, 'serial', 40, 6);
/** The spares' memory budgets the serial rounds compare: none (one spare), the shipped one, a large one. */
const SERIAL_BUDGETS_MB = [0, agentDefaults.warmSparesMemoryMb, 4096] as const;
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Path {
  name: string;
  worker: RunningWorker;
  /** When each agent session got its first prompt, by session id (epoch ms). */
  prompts: Map<string, number>;
  /** The session each thread's first turn ran on. */
  sessions: Map<string, string>;
  /** How long each agent start waited for its turn (ms). */
  startWaits: number[];
  /** Spawn → `initialize` answered, per agent process (ms). */
  starts: number[];
  sandbox: Sandbox;
  stateDir: string;
  ms: number[];
}

const redis = await startRedis({ private: true });
const SANDBOXES = ['bubblewrap', 'off'] as const;
type Sandbox = (typeof SANDBOXES)[number];

async function startPath(
  name: string,
  sandbox: Sandbox,
  spares: number,
  slots?: number,
  sparesMemoryMb: number = agentDefaults.warmSparesMemoryMb,
): Promise<Path> {
  const stateDir = await mkdtemp(join(tmpdir(), `tributary-first-prompt-${name}-`));
  const prompts = new Map<string, number>();
  const sessions = new Map<string, string>();
  const startWaits: number[] = [];
  const starts: number[] = [];
  const spawnedAt = new Map<number, number>();
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (record.msg === 'dispatch') sessions.set(String(record.thread), String(record.sessionId));
        if (record.msg === 'agent start began') startWaits.push(Number(record.waitedMs));
        if (record.msg === 'agent process started') spawnedAt.set(Number(record.pid), Number(record.time));
        if (record.msg === 'agent initialized') {
          const at = spawnedAt.get(Number(record.pid));
          if (at !== undefined) starts.push(Number(record.time) - at);
        }
        if (record.msg !== 'agent stderr' || !String(record.line).includes('session/prompt')) return;
        const said = JSON.parse(String(record.line)) as { sessionId: string; at: number };
        if (!prompts.has(said.sessionId)) prompts.set(said.sessionId, said.at);
      },
    },
  );
  const config = loadWorkerConfig({
    REDIS_URL: redis.url,
    REDIS_PREFIX: uniquePrefix(`first-prompt-${name}`),
    METRICS_PORT: '0',
    SHUTDOWN_GRACE_MS: '0',
    AGENT_WARM_SPARES: String(spares),
    AGENT_WARM_SPARES_MEMORY_MB: String(sparesMemoryMb),
    AGENT_SANDBOX: sandbox,
    AGENT_WORKSPACES: stateDir,
    ...(slots === undefined ? {} : { WORKER_CONCURRENCY: String(slots), AGENT_MAX_SESSIONS: String(slots) }),
  });
  const worker = await startWorker(config, {
    logger,
    builtInAgent: builtInAgentCommand(),
    sinks: [],
  });
  return { name, worker, prompts, sessions, startWaits, starts, sandbox, stateDir, ms: [] };
}

/** Enqueues the first message of a thread `path` has never seen; resolves with its thread and ack time. */
async function newThread(path: Path, index: number | string): Promise<{ thread: string; ackAt: number }> {
  const thread = `gateway:C1:${path.name}-${index}`;
  const event = {
    eventId: `${path.name}-${index}`,
    platform: 'gateway',
    channelId: 'C1',
    threadId: `${path.name}-${index}`,
    sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
    timestamp: new Date().toISOString(),
    text: 'a new conversation',
    attachments: [],
  };
  await path.worker.queue.intake.enqueue(thread, queuedArrival(event, `${thread}:${event.eventId}`));
  return { thread, ackAt: performance.timeOrigin + performance.now() };
}

/** When the agent got `thread`'s first prompt (epoch ms), once it has. */
function firstPrompt(path: Path, thread: string, timeoutMs = 30_000): Promise<number> {
  return waitFor(
    () => {
      const session = path.sessions.get(thread);
      return session === undefined ? undefined : path.prompts.get(session);
    },
    { what: `the first prompt of ${thread}`, timeoutMs, intervalMs: 1 },
  );
}

function committed(path: Path, thread: string, timeoutMs = 30_000): Promise<unknown> {
  return waitFor(async () => (await path.worker.queue.admin.state(thread)).status === 'idle', {
    what: `${thread} to commit`,
    timeoutMs,
  });
}

/** One new thread on `path`: its first message's ack to its first prompt at the agent, in ms. */
async function sample(path: Path, index: number): Promise<number> {
  const { thread, ackAt } = await newThread(path, index);
  const promptAt = await firstPrompt(path, thread);
  await committed(path, thread);
  return promptAt - ackAt;
}

/** `count` new threads at once on `path`: each one's ack to its first prompt, in ms. */
async function burstOf(path: Path, count: number): Promise<number[]> {
  const sent = await Promise.all(Array.from({ length: count }, (_, i) => newThread(path, i)));
  const ms = await Promise.all(
    sent.map(async ({ thread, ackAt }) => (await firstPrompt(path, thread, 120_000)) - ackAt),
  );
  await Promise.all(sent.map(({ thread }) => committed(path, thread, 120_000)));
  return ms;
}

/** New threads one after another, each sent once the previous one's prompt reached its agent. */
async function serialRound(path: Path, count: number, round: number): Promise<number[]> {
  const ms: number[] = [];
  const threads: string[] = [];
  for (let i = 0; i < count; i++) {
    const { thread, ackAt } = await newThread(path, `r${round}-${i}`);
    ms.push((await firstPrompt(path, thread, 120_000)) - ackAt);
    threads.push(thread);
  }
  await Promise.all(threads.map((thread) => committed(path, thread, 120_000)));
  return ms;
}

/** Waits until the worker is as a quiet one would be: every spare it keeps ready. */
async function settle(path: Path, spares: number): Promise<void> {
  await waitFor(() => path.worker.pool.readySpares >= spares, {
    what: `${path.name}'s spare`,
    timeoutMs: 30_000,
  });
}

const spaced = SANDBOXES.flatMap((sandbox) => [
  { sandbox, spares: 1, path: undefined as Path | undefined },
  { sandbox, spares: 0, path: undefined as Path | undefined },
]);
const paths: Path[] = [];
for (const entry of spaced) {
  entry.path = await startPath(
    `${entry.sandbox}-${entry.spares ? 'warm' : 'cold'}`,
    entry.sandbox,
    entry.spares,
  );
  paths.push(entry.path);
}
const stopped = new Set<Path>();
/** Closes a path's worker once. */
async function stop(path: Path): Promise<void> {
  if (stopped.has(path)) return;
  stopped.add(path);
  await path.worker.close();
}
const sparesOf = (path: Path) => (path.name.endsWith('warm') ? 1 : 0);
try {
  // One thread each first: the cold paths' agent capabilities are then known, as on a running worker.
  for (const path of paths) await sample(path, -1);
  for (let i = 0; i < samples; i++) {
    // Rotate which path goes first, so drift on a shared machine falls on all alike.
    const order = paths.map((_, k) => paths[(i + k) % paths.length]!);
    for (const path of order) {
      await settle(path, sparesOf(path));
      path.ms.push(await sample(path, i));
    }
    if ((i + 1) % 10 === 0) log(`first-prompt: ${i + 1}/${samples} samples of each`);
  }
  // What one spare costs: an idle, initialized agent process (its whole process group, bwrap included).
  const sparePss = new Map<Sandbox, number>();
  for (const path of paths.filter((p) => sparesOf(p) === 1)) {
    await settle(path, 1);
    const agentPids = [...new Set([...path.sessions.keys()].map((t) => path.worker.pool.pidOf(t)))].filter(
      (pid): pid is number => pid !== undefined,
    );
    const memories = await Promise.all(agentPids.map(agentMemory));
    const pssMb = memories.map((m) => m.pssKb / 1024).sort((a, b) => a - b);
    sparePss.set(path.sandbox, rounded(pssMb[Math.floor(pssMb.length / 2)] ?? 0, 1));
  }
  for (const path of [...paths]) await stop(path);

  // Each burst on a worker of its own, with a turn slot for each thread: only the start bound orders them.
  const herds = new Map<Sandbox, Path>();
  for (const sandbox of SANDBOXES) {
    const herd = await startPath(`burst-${sandbox}`, sandbox, 1, burst);
    paths.push(herd);
    herds.set(sandbox, herd);
    await settle(herd, 1);
    herd.startWaits.length = 0;
    herd.ms = await burstOf(herd, burst);
    await stop(herd);
    log(`first-prompt: burst of ${burst} answered (${sandbox})`);
  }

  // New threads one after another, sandboxed: two rounds on each budget, the second once the spares
  // the first asked for are ready (well within a minute of it, before any is given back).
  const serials: { budgetMb: number; rounds: Path[]; aim: number; spareMb: number }[] = [];
  for (const budgetMb of SERIAL_BUDGETS_MB) {
    const path = await startPath(`serial-${budgetMb}`, 'bubblewrap', 1, serial, budgetMb);
    paths.push(path);
    await settle(path, 1);
    await waitFor(() => path.worker.pool.bytesPerSpare !== undefined, {
      what: 'the spare to be measured',
      timeoutMs: 30_000,
    });
    const rounds: Path[] = [];
    for (const round of [1, 2]) {
      path.starts.length = 0;
      path.startWaits.length = 0;
      const ms = await serialRound(path, serial, round);
      // A round's starts include the replacements of the spares it took, which end after it.
      await waitFor(() => path.worker.pool.readySpares >= path.worker.pool.spareTarget, {
        what: `${path.name}'s spares`,
        timeoutMs: 300_000,
      });
      rounds.push({
        ...path,
        name: `${path.name}-round-${round}`,
        ms,
        starts: [...path.starts],
        startWaits: [...path.startWaits],
      });
    }
    const { spareTarget, bytesPerSpare } = path.worker.pool;
    serials.push({
      budgetMb,
      rounds,
      aim: spareTarget,
      spareMb: rounded((bytesPerSpare ?? 0) / 1024 ** 2, 1),
    });
    await stop(path);
    log(
      `first-prompt: ${serial} new threads one after another, twice (AGENT_WARM_SPARES_MEMORY_MB=${budgetMb})`,
    );
  }

  const p = (ms: number[], q: number) => rounded(percentile(ms, q), 1);
  const some = (ms: number[]) => (ms.length ? ms : [0]);
  const row = (name: string, path: Path) => [
    `${name}, AGENT_SANDBOX=${path.sandbox}`,
    p(path.ms, 50),
    p(path.ms, 99),
    path.ms.length,
    p(some(path.starts), 50),
    p(some(path.startWaits), 50),
    p(some(path.startWaits), 99),
  ];
  const find = (sandbox: Sandbox, spares: number) =>
    paths.find(
      (path) => path.sandbox === sandbox && sparesOf(path) === spares && !path.name.startsWith('burst'),
    )!;
  const rows = [
    ...SANDBOXES.flatMap((sandbox) => [
      row('with a warm spare (AGENT_WARM_SPARES=1)', find(sandbox, 1)),
      row('without (AGENT_WARM_SPARES=0)', find(sandbox, 0)),
      row(`a burst of ${burst} at once (WORKER_CONCURRENCY=${burst})`, herds.get(sandbox)!),
    ]),
    ...serials.flatMap(({ budgetMb, rounds }) =>
      rounds.map((path, i) =>
        row(`${serial} one after another, round ${i + 1} (AGENT_WARM_SPARES_MEMORY_MB=${budgetMb})`, path),
      ),
    ),
  ];
  const columns = [
    'new thread',
    'ack → prompt p50 (ms)',
    'ack → prompt p99 (ms)',
    'samples',
    'agent start p50 (ms)',
    'start wait p50 (ms)',
    'start wait p99 (ms)',
  ];
  log(formatTable(columns, rows));
  const [warm, cold, herd] = [find('bubblewrap', 1), find('bubblewrap', 0), herds.get('bubblewrap')!];
  const [warmOff, coldOff] = [find('off', 1), find('off', 0)];
  const allStarts = (sandbox: Sandbox) =>
    paths.filter((path) => path.sandbox === sandbox).flatMap((path) => path.starts);
  log(`memory per spare: ${sparePss.get('bubblewrap')} MB PSS sandboxed, ${sparePss.get('off')} MB without`);
  const serialOf = (budgetMb: number) => serials.find((entry) => entry.budgetMb === budgetMb)!;
  const [fixed, shipped, large] = SERIAL_BUDGETS_MB.map(serialOf) as [
    (typeof serials)[number],
    (typeof serials)[number],
    (typeof serials)[number],
  ];
  const roundP99 = (entry: (typeof serials)[number], round: number) => p(entry.rounds[round - 1]!.ms, 99);
  const aims = serials.map(
    ({ budgetMb, aim, spareMb }) => `${aim} spares of ${spareMb} MB with ${budgetMb} MB`,
  );
  log(`spares aimed at after the first serial round: ${aims.join(', ')}`);
  const path = await writeBenchResult(values, {
    name: 'first-prompt',
    title:
      "A new thread's first message: acknowledged → prompt at the agent, with and without warm spares and the sandbox",
    columns,
    rows,
    ratios: {
      warm_p50_ms: p(warm.ms, 50),
      warm_p99_ms: p(warm.ms, 99),
      cold_p99_over_warm_p99: rounded(percentile(cold.ms, 99) / percentile(warm.ms, 99)),
      burst_p99_ms: p(herd.ms, 99),
      burst_start_wait_p99_ms: p(herd.startWaits, 99),
      spare_pss_mb: sparePss.get('bubblewrap') ?? 0,
      spare_pss_mb_unsandboxed: sparePss.get('off') ?? 0,
      warm_p99_sandbox_over_off: rounded(percentile(warm.ms, 99) / percentile(warmOff.ms, 99)),
      cold_p50_sandbox_over_off: rounded(percentile(cold.ms, 50) / percentile(coldOff.ms, 50)),
      start_p50_sandbox_over_off: rounded(
        percentile(some(allStarts('bubblewrap')), 50) / percentile(some(allStarts('off')), 50),
      ),
      serial_round1_p99_ms_one_spare: roundP99(fixed, 1),
      serial_round2_p99_ms_one_spare: roundP99(fixed, 2),
      serial_round1_p99_ms_shipped_budget: roundP99(shipped, 1),
      serial_round2_p99_ms_shipped_budget: roundP99(shipped, 2),
      serial_round1_p99_ms_large_budget: roundP99(large, 1),
      serial_round2_p99_ms_large_budget: roundP99(large, 2),
      serial_round2_p99_large_budget_over_one_spare: rounded(roundP99(large, 2) / roundP99(fixed, 2)),
      serial_spares_aimed_at_shipped_budget: shipped.aim,
      serial_spares_aimed_at_large_budget: large.aim,
    },
    notes: [
      'One worker process per path with the built-in agent (TypeScript through tsx), on one private Redis; the four spaced paths take turns sample by sample.',
      'AGENT_SANDBOX=bubblewrap: each agent in a bubblewrap sandbox of its own (docs/adr/0044), the default; off: a child of the worker as before. The README headline reads the sandboxed rows.',
      'Ack: the enqueue script answered (what ingress acknowledges with 2xx). Prompt: the time the built-in agent logged on receiving session/prompt. Agent start: from the spawn (of bwrap, when sandboxed) to the initialize answer.',
      'Each sample is a thread the worker never saw, sent to an idle worker whose spare was ready again; a burst of new threads larger than the spares waits for starts.',
      `Memory per spare: the median PSS of an idle agent process group, bwrap included: ${sparePss.get('bubblewrap')} MB sandboxed, ${sparePss.get('off')} MB without.`,
      `One after another: ${serial} new threads on a sandboxed worker with ${serial} turn slots and sessions, each sent once the previous one's prompt reached its agent, in two rounds; the second begins once the spares the first asked for are ready. AGENT_WARM_SPARES=1 throughout; AGENT_WARM_SPARES_MEMORY_MB=0 keeps that one spare, ${agentDefaults.warmSparesMemoryMb} (the default) and 4096 let the spares grow by one for each thread that found none ready (docs/adr/0047). Spares aimed at after the first round: ${aims.join('; ')}.`,
      `The bursts: ${burst} new threads enqueued at once on a worker of their own with ${burst} turn slots and sessions and one spare; its agents start ${agentDefaults.startConcurrency()} at a time (AGENT_START_CONCURRENCY, one per CPU), the rest wait their turn in order. Start wait: from a start being asked for to its spawn.`,
    ],
  });
  log(`first-prompt: wrote ${path}`);
} finally {
  for (const path of paths) await stop(path);
  await redis.stop();
  await Promise.all(paths.map((path) => rm(path.stateDir, { recursive: true, force: true })));
}
