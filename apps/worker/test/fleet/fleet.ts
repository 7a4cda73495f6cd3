import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ArrivalEvent, queuedArrival } from '@tributary/packing';
import { BullDoorbell, queueConfig, type ThreadQueue, threadQueue } from '@tributary/queue';
import { keysOf } from '@tributary/queue/testing';
import {
  deletePrefix,
  type RedisHandle,
  type StartRedisOptions,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@tributary/testkit';
import { Redis } from 'ioredis';
import type { OutboundMessage } from '../../src/replies/outbox.js';

type LogLine = Record<string, unknown>;

/** One worker process of a fleet and what it logged. */
export interface FleetWorker {
  readonly name: string;
  readonly pid: number;
  readonly logs: LogLine[];
  /** SIGKILL: no hand-back, no goodbye; its agent goes down with its stdin. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful shutdown; resolves with the exit code. */
  terminate(): Promise<number | null>;
  /** SIGSTOP / SIGCONT: a worker that stalls (GC, partition) and comes back. */
  freeze(): void;
  thaw(): void;
  /**
   * A signal to the worker's whole process group, as a terminal or a service manager sends it: the
   * worker leads a group of its own, as under a service manager.
   */
  signalGroup(signal: NodeJS.Signals): void;
}

/** Real worker processes (real Redis, the built-in agent over stdio) sharing one queue. */
export interface Fleet {
  readonly queue: ThreadQueue;
  /** A connection to the fleet's Redis, for what tests read beside the queue. */
  readonly redis: Redis;
  /** Where the fleet's Redis is, for a store of the test's own. */
  readonly redisUrl: string;
  readonly workers: FleetWorker[];
  /** Starts one more worker; `agentStateDir` defaults to one of its own. */
  spawn(options?: { agentStateDir?: string; env?: Record<string, string> }): Promise<FleetWorker>;
  send(thread: string, event: ArrivalEvent): Promise<void>;
  /** Replies posted for the thread, in the order the test read them, with who posted them. */
  replies(thread: string): { worker: FleetWorker; message: OutboundMessage }[];
  /** Whether the thread's reply outbox is empty: every reply delivered and its delivery recorded. */
  outboxEmpty(thread: string): Promise<boolean>;
  /** The `dispatch` log lines of the thread's turns, with who dispatched them. */
  dispatches(thread: string): { worker: FleetWorker; log: LogLine }[];
  waitForReplies(thread: string, count: number): Promise<void>;
  tempDir(): Promise<string>;
  close(): Promise<void>;
}

const workerMain = new URL('./worker-main.ts', import.meta.url);

/** `env` goes to every worker; the built-in agent sees the TRIBUTARY_AGENT_* variables. */
export async function startFleet(
  env: Record<string, string>,
  queue: object = {},
  redisOptions: StartRedisOptions = {},
): Promise<Fleet> {
  const server: RedisHandle = await startRedis(redisOptions);
  const redis = new Redis(server.url);
  const prefix = uniquePrefix('fleet');
  const config = queueConfig({ prefix });
  const doorbell = new BullDoorbell(redis, config);
  const threads = threadQueue(redis, config, doorbell);
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const workers: FleetWorker[] = [];
  // Every worker's log lines in the order they were read, so turns on different workers keep their order.
  const lines: { worker: FleetWorker; log: LogLine }[] = [];

  const tempDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tributary-fleet-'));
    dirs.push(dir);
    return dir;
  };

  const fleet: Fleet = {
    queue: threads,
    redis,
    redisUrl: server.url,
    workers,
    tempDir,
    async spawn(options = {}) {
      const child = fork(workerMain, {
        env: {
          ...process.env,
          METRICS_PORT: '0',
          SHUTDOWN_GRACE_MS: '0',
          // A frozen worker is given up on after 2 s, as fleets of these tests were written for.
          WORKER_STALL_TOLERANCE_MS: '2000',
          TRIBUTARY_AGENT_SCRIPTING: 'on',
          // The fleets' tests read what agents received from one state folder, outside any sandbox.
          AGENT_SANDBOX: 'off',
          AGENT_ENV:
            'TRIBUTARY_AGENT_STATE_DIR,TRIBUTARY_AGENT_CAPS,TRIBUTARY_AGENT_DEFAULTS,TRIBUTARY_AGENT_SCRIPTING',
          ...env,
          ...options.env,
          REDIS_URL: server.url,
          REDIS_PREFIX: prefix,
          TRIBUTARY_AGENT_STATE_DIR: options.agentStateDir ?? (await tempDir()),
          TRIBUTARY_TEST_QUEUE: JSON.stringify(queue),
        },
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
        detached: true,
      });
      children.push(child);
      const logs: LogLine[] = [];
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const worker: FleetWorker = {
        name: `worker-${workers.length + 1}`,
        pid: child.pid!,
        logs,
        async kill() {
          child.kill('SIGKILL');
          await exited;
        },
        async terminate() {
          child.kill('SIGTERM');
          await exited;
          return child.exitCode;
        },
        freeze: () => child.kill('SIGSTOP'),
        thaw: () => child.kill('SIGCONT'),
        signalGroup: (signal) => process.kill(-child.pid!, signal),
      };
      workers.push(worker);
      let pending = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        const read = (pending + chunk.toString()).split('\n');
        pending = read.pop()!;
        for (const line of read) {
          if (!line.startsWith('{')) continue;
          const log = JSON.parse(line) as LogLine;
          logs.push(log);
          lines.push({ worker, log });
        }
      });
      // Cold: tsx compiles the worker's modules on start, and tests start two side by side on two
      // shared cores whose page cache may have been reclaimed.
      await waitFor(() => logs.some((l) => l.msg === 'worker started'), {
        what: `${worker.name} start`,
        timeoutMs: 40_000,
      });
      return worker;
    },
    async send(thread, event) {
      await threads.intake.enqueue(thread, queuedArrival(event, `${thread}:${event.eventId}`));
    },
    replies(thread) {
      return lines
        .filter(({ log }) => log.msg === 'sent')
        .map(({ worker, log }) => ({ worker, message: log.message as OutboundMessage }))
        .filter(({ message }) => message.thread === thread && message.kind === 'reply');
    },
    async outboxEmpty(thread) {
      return (await redis.llen(keysOf(threads, thread).replies)) === 0;
    },
    dispatches(thread) {
      return lines.filter(({ log }) => log.msg === 'dispatch' && log.thread === thread);
    },
    async waitForReplies(thread, count) {
      await waitFor(() => fleet.replies(thread).length >= count, {
        what: `${count} replies on ${thread}`,
        timeoutMs: 30_000,
      });
    },
    async close() {
      // A group stopped whole is woken whole; one whose worker is gone needs nothing.
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGCONT');
      }
      await Promise.all(
        children.map((child) =>
          child.exitCode === null && child.signalCode === null
            ? new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'))
            : undefined,
        ),
      );
      await doorbell.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      await server.stop();
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
  return fleet;
}
