/**
 * A new thread's wait for its agent (issue: real coding agents; docs/adr/0037): from the moment its
 * first message is acknowledged (the enqueue script answered, as ingress's 2xx) to the moment the
 * prompt reaches the agent process (the built-in agent logs each prompt with its arrival time), on a
 * worker with warm spares and on one without, taking turns sample by sample. Each sample is a thread
 * the worker has never seen, sent when the worker is idle (its previous turn committed, its spare
 * replaced), as a quiet fleet meets a new conversation. Also prints what one spare costs: the PSS of
 * an idle agent process.
 *
 *   npm run bench:first-prompt [-- --samples 40] [-- --smoke]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadWorkerConfig } from '@tributary/config';
import { queuedArrival } from '@tributary/packing';
import { startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { type RunningWorker, startWorker } from '@tributary/worker';
import { pino } from 'pino';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { groupMemory } from './process-memory.js';
import { percentile, rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, samples: { type: 'string' } } });
const samples = sizeOption(values, 'samples', 40, 6);
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Path {
  name: string;
  worker: RunningWorker;
  /** When each agent session got its first prompt, by session id (epoch ms). */
  prompts: Map<string, number>;
  /** The session each thread's first turn ran on. */
  sessions: Map<string, string>;
  stateDir: string;
  ms: number[];
}

const redis = await startRedis({ private: true });

async function startPath(name: string, spares: number): Promise<Path> {
  const stateDir = await mkdtemp(join(tmpdir(), `tributary-first-prompt-${name}-`));
  const prompts = new Map<string, number>();
  const sessions = new Map<string, string>();
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (record.msg === 'dispatch') sessions.set(String(record.thread), String(record.sessionId));
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
  });
  const worker = await startWorker(config, {
    logger,
    sinks: [],
    agentEnv: { TRIBUTARY_AGENT_STATE_DIR: stateDir },
  });
  return { name, worker, prompts, sessions, stateDir, ms: [] };
}

/** One new thread on `path`: its first message's ack to its first prompt at the agent, in ms. */
async function sample(path: Path, index: number): Promise<number> {
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
  await path.worker.queue.enqueue(thread, queuedArrival(event, `${thread}:${event.eventId}`));
  const ackAt = performance.timeOrigin + performance.now();
  const promptAt = await waitFor(
    () => {
      const session = path.sessions.get(thread);
      return session === undefined ? undefined : path.prompts.get(session);
    },
    { what: `the first prompt of ${thread}`, timeoutMs: 30_000, intervalMs: 1 },
  );
  await waitFor(async () => (await path.worker.queue.state(thread)).status === 'idle', {
    what: `${thread} to commit`,
    timeoutMs: 30_000,
  });
  return promptAt - ackAt;
}

/** Waits until the worker is as a quiet one would be: every spare it keeps ready. */
async function settle(path: Path, spares: number): Promise<void> {
  await waitFor(() => path.worker.pool.readySpares >= spares, {
    what: `${path.name}'s spare`,
    timeoutMs: 30_000,
  });
}

const warm = await startPath('warm', 1);
const cold = await startPath('cold', 0);
try {
  // One thread each first: the cold path's agent capabilities are then known, as on a running worker.
  for (const path of [warm, cold]) await sample(path, -1);
  for (let i = 0; i < samples; i++) {
    // Alternate which path goes first, so drift on a shared machine falls on both alike.
    const order = i % 2 === 0 ? [warm, cold] : [cold, warm];
    for (const path of order) {
      await settle(path, path === warm ? 1 : 0);
      path.ms.push(await sample(path, i));
    }
    if ((i + 1) % 10 === 0) log(`first-prompt: ${i + 1}/${samples} samples of each`);
  }
  // What one spare costs: an idle, initialized agent process (its whole process group).
  await settle(warm, 1);
  const agentPids = [...new Set([...warm.sessions.keys()].map((t) => warm.worker.pool.pidOf(t)))].filter(
    (pid): pid is number => pid !== undefined,
  );
  const memories = await Promise.all(agentPids.map(groupMemory));
  const pssMb = memories.map((m) => m.pssKb / 1024).sort((a, b) => a - b);
  const sparePssMb = rounded(pssMb[Math.floor(pssMb.length / 2)] ?? 0, 1);

  const p = (ms: number[], q: number) => rounded(percentile(ms, q), 1);
  const rows = [
    ['with a warm spare (AGENT_WARM_SPARES=1)', p(warm.ms, 50), p(warm.ms, 99), warm.ms.length],
    ['without (AGENT_WARM_SPARES=0)', p(cold.ms, 50), p(cold.ms, 99), cold.ms.length],
  ];
  const columns = ['new thread', 'ack → prompt p50 (ms)', 'ack → prompt p99 (ms)', 'samples'];
  log(formatTable(columns, rows));
  log(`memory per spare: ${sparePssMb} MB PSS (median of ${memories.length} idle agent processes)`);
  const path = await writeBenchResult(values, {
    name: 'first-prompt',
    title: "A new thread's first message: acknowledged → prompt at the agent, with and without warm spares",
    columns,
    rows,
    ratios: {
      warm_p50_ms: p(warm.ms, 50),
      warm_p99_ms: p(warm.ms, 99),
      cold_p99_over_warm_p99: rounded(percentile(cold.ms, 99) / percentile(warm.ms, 99)),
      spare_pss_mb: sparePssMb,
    },
    notes: [
      'One worker process per path with the built-in agent (TypeScript through tsx), on one private Redis; the two paths take turns sample by sample.',
      'Ack: the enqueue script answered (what ingress acknowledges with 2xx). Prompt: the time the built-in agent logged on receiving session/prompt.',
      'Each sample is a thread the worker never saw, sent to an idle worker whose spare was ready again; a burst of new threads larger than the spares waits for starts.',
      `Memory per spare: the median PSS of an idle agent process group, ${sparePssMb} MB here.`,
    ],
  });
  log(`first-prompt: wrote ${path}`);
} finally {
  await warm.worker.close();
  await cold.worker.close();
  await redis.stop();
  await Promise.all([warm, cold].map((path) => rm(path.stateDir, { recursive: true, force: true })));
}
