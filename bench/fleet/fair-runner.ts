/**
 * One worker of the route-fairness benchmark in a process of its own, as each worker is in a
 * deployment: a runner on real Redis and BullMQ doorbells, taking the flood route's turn slots as the
 * worker's turn handler does. Forked with its settings in the environment, it says `ready` once
 * consuming, then reports to its parent: each quiet message's dispatch (`quiet`), each flood turn's end
 * (`flood`, whose thread takes its next message from the enqueuer), and each failed batch. Told
 * `stop`, it closes and says `stopped`.
 */
import { createMetrics, silentLogger } from '@tributary/observability';
import { Store, TurnNotStartedError } from '@tributary/queue';
import { RouteAtLimit, RouteTurnSlots } from '@tributary/worker';
import { pino } from 'pino';

/** What a runner says to the benchmark. */
export type RunnerReport =
  | { kind: 'ready' }
  | { kind: 'quiet'; thread: string; acceptedAt: number; dispatchedAt: number }
  | { kind: 'flood'; thread: string }
  | { kind: 'failed' }
  | { kind: 'stopped' };

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`fork this with ${name} set`);
  return value;
};
const send = process.send?.bind(process);
if (!send) throw new Error('fork this from bench/route-fairness.ts');
// A turn the close handed back may still end after the parent has let go.
const report = (message: RunnerReport) => {
  if (process.connected) send(message);
};

/** The quiet route's threads: the measured one and those that warm the runners up. */
const quietChannel = env('FAIR_QUIET_CHANNEL');
const limited = env('FAIR_LIMITED_ROUTE');
const turnMs = Number(env('FAIR_TURN_MS'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const store = Store.open({
  url: env('FAIR_REDIS_URL'),
  connection: { kind: 'patient' },
  // Every ring goes to the shared queue: session affinity would hand the quiet thread's doorbell to
  // its last worker, past the queue this measures.
  queue: { prefix: env('FAIR_PREFIX'), affinity: false },
});
const slots = new RouteTurnSlots(store.turnLimits, store, createMetrics());
const quiet = pino({ level: 'silent' });
const runner = store.runner({
  concurrency: Number(env('FAIR_CONCURRENCY')),
  logger: silentLogger,
  replies: { deliver: async () => undefined },
  handler: async (batch) => {
    const { thread } = batch.lease;
    if (thread.startsWith(quietChannel)) {
      const dispatchedAt = Date.now();
      for (const { acceptedAt } of batch.messages) {
        report({ kind: 'quiet', thread, acceptedAt, dispatchedAt });
      }
      return { reply: '', stopReason: 'end_turn' };
    }
    // The worker's own protocol (turn-handler.ts): a slot of the route, or the batch waits in line.
    let held: boolean;
    try {
      held = await slots.take(limited, thread, quiet);
    } catch (error) {
      if (error instanceof RouteAtLimit) throw new TurnNotStartedError(error.message, [], 60_000);
      throw error;
    }
    try {
      await sleep(turnMs);
    } finally {
      if (held) await slots.free(limited, thread, quiet);
    }
    // A busy channel: the thread's next message is there as its turn ends.
    report({ kind: 'flood', thread });
    return { reply: '', stopReason: 'end_turn' };
  },
  events: { batchEnded: (outcome) => void (outcome === 'failed' && report({ kind: 'failed' })) },
});
await runner.start();
process.on('message', (message: string) => {
  if (message !== 'stop') return;
  void runner
    .close()
    .then(() => store.close())
    .then(() => {
      report({ kind: 'stopped' });
      process.disconnect();
    });
});
report({ kind: 'ready' });
