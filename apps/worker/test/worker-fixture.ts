import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtInAgentCommand, isBrokerBlock, readStoredSessions } from '@tributary/agent';
import { loadWorkerConfig } from '@tributary/config';
import { type ArrivalEvent, queuedArrival, type UnpackedEvent, unpackBatch } from '@tributary/packing';
import { type QueueConfig, Store } from '@tributary/queue';
import {
  checkSpokenAcpVersion,
  deletePrefix,
  type RedisHandle,
  runAcpVersionEnv,
  type StartRedisOptions,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@tributary/testkit';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { OutboundMessage } from '../src/replies/outbox.js';
import type { TurnSignal } from '../src/turns/turn-signals.js';
import { type RunningWorker, startWorker, type WorkerOptions } from '../src/worker-service.js';

/** A real worker (real Redis, real built-in agent over stdio) plus what it sent and signalled. */
export interface WorkerHarness {
  worker: RunningWorker;
  /** Stops the worker (threads handed back, agent killed) and starts a new one on the same Redis and agent state. */
  restartWorker(): Promise<void>;
  redis: Redis;
  /** Where `redis` connects, for a store of the test's own. */
  redisUrl: string;
  prefix: string;
  sent: OutboundMessage[];
  /** Each turn signal, with when it came (performance.now()). */
  signals: (TurnSignal & { at: number })[];
  logs: Record<string, unknown>[];
  send(thread: string, event: ArrivalEvent): Promise<void>;
  /** Every prompt the agent received, per session, unpacked into events. */
  prompts(): Promise<SessionPrompts[]>;
  close(): Promise<void>;
}

export type SessionPrompts = { sessionId: string; events: UnpackedEvent[] }[];

/** Every prompt the built-in agent kept in `stateDir`, per session, unpacked into events. */
export async function agentPrompts(stateDir: string): Promise<SessionPrompts[]> {
  const sessions = await readStoredSessions(stateDir);
  return sessions.map((s) =>
    s.history.flatMap((h) =>
      // The broker's own blocks (a fresh session's history) are not events.
      h.role === 'user'
        ? [{ sessionId: s.sessionId, events: unpackBatch(h.prompt.filter((block) => !isBrokerBlock(block))) }]
        : [],
    ),
  );
}

let eventCounter = 0;
export function message(text: string, sender = 'ada', at = new Date()): ArrivalEvent {
  eventCounter++;
  return {
    eventId: `ev-${eventCounter}-${Date.now()}`,
    platform: 'gateway',
    channelId: 'C1',
    threadId: 'T1',
    sender: { id: `U-${sender}`, name: sender, displayName: sender.toUpperCase(), isBot: false },
    timestamp: at.toISOString(),
    text,
    attachments: [],
  };
}

export async function startHarness(
  env: Record<string, string> = {},
  queue: Partial<QueueConfig> = {},
  {
    agentEnv,
    redis: redisOptions,
    ...options
  }: Pick<WorkerOptions, 'consumerTiming' | 'agentEnv'> & { redis?: StartRedisOptions } = {},
): Promise<WorkerHarness> {
  const server: RedisHandle = await startRedis(redisOptions);
  const redis = new Redis(server.url);
  const prefix = uniquePrefix('w');
  const stateDir = await mkdtemp(join(tmpdir(), 'tributary-agent-state-'));
  const sent: OutboundMessage[] = [];
  const signals: (TurnSignal & { at: number })[] = [];
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const config = loadWorkerConfig({
    REDIS_URL: server.url,
    REDIS_PREFIX: prefix,
    WORKER_CONCURRENCY: '2',
    METRICS_PORT: '0',
    SHUTDOWN_GRACE_MS: '0',
    // These tests read what the agent received from its state folder, outside any sandbox; the
    // sandbox's own tests run it (test/sandbox).
    AGENT_SANDBOX: 'off',
    ...env,
  });
  const start = () =>
    startWorker(config, {
      logger,
      builtInAgent: builtInAgentCommand(),
      sinks: [{ name: 'capture', send: async (m) => void sent.push(m) }],
      queue: { retryDelayMs: 100, ...queue },
      // Tests script the agent with `@agent` lines in their messages.
      agentEnv: {
        TRIBUTARY_AGENT_STATE_DIR: stateDir,
        TRIBUTARY_AGENT_SCRIPTING: 'on',
        ...runAcpVersionEnv(),
        ...agentEnv,
      },
      onSignal: (s) => signals.push({ ...s, at: performance.now() }),
      ...options,
    });
  const harness: WorkerHarness = {
    worker: await start(),
    async restartWorker() {
      await harness.worker.close();
      harness.worker = await start();
    },
    redis,
    redisUrl: server.url,
    prefix,
    sent,
    signals,
    logs,
    async send(thread, event) {
      await harness.worker.queue.intake.enqueue(thread, queuedArrival(event, `${thread}:${event.eventId}`));
    },
    prompts: () => agentPrompts(stateDir),
    async close() {
      await harness.worker.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      await server.stop();
      await rm(stateDir, { recursive: true, force: true });
      checkSpokenAcpVersion(logs);
    },
  };
  return harness;
}

/** Every byte the harness's (private) Redis wrote to its append-only files, deleted keys included. */
export async function appendOnlyFiles(h: Pick<WorkerHarness, 'redis'>): Promise<string> {
  const [, dir] = (await h.redis.config('GET', 'dir')) as [string, string];
  const [, sub] = (await h.redis.config('GET', 'appenddirname')) as [string, string];
  const files = await readdir(join(dir, sub));
  const contents = await Promise.all(files.map((file) => readFile(join(dir, sub, file), 'latin1')));
  return contents.join('\n');
}

/** The value of one series on the worker's /metrics, e.g. `tributary_turns_total{outcome="ok"}`. */
export async function metric(harness: WorkerHarness, series: string): Promise<number> {
  const text = await (await fetch(`${harness.worker.healthUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.split(' ')[1]);
}

export function replies(h: WorkerHarness, thread: string): OutboundMessage[] {
  return h.sent.filter((m) => m.thread === thread && m.kind === 'reply');
}

export function waitForReplies(h: WorkerHarness, thread: string, count: number, timeoutMs = 20_000) {
  return waitFor(() => replies(h, thread).length >= count, {
    what: `${count} replies on ${thread}`,
    timeoutMs,
  });
}

/** Watchdog limits short enough for a hung turn to time out, and be killed, within a test. */
export const hungTurnLimits = {
  TURN_TIMEOUT_MS: '1200',
  STALL_SOFT_MS: '200',
  STALL_HARD_MS: '500',
  CANCEL_TIMEOUT_MS: '300',
} as const;

/**
 * Opens a store on the harness's Redis for `use` (what ingress would write: a thread's route, the
 * route table's limits), and closes it.
 */
export async function withStore<T>(h: WorkerHarness, use: (store: Store) => Promise<T>): Promise<T> {
  const store = Store.open({ url: h.redisUrl, connection: { kind: 'patient' }, queue: { prefix: h.prefix } });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** Records `thread`'s route as ingress does at its first message (docs/adr/0058). */
export function noteRoute(h: WorkerHarness, thread: string, route: string, profile: object): Promise<void> {
  return withStore(h, (store) => store.routes.note(thread, JSON.stringify({ route, profile })));
}
