/**
 * One chaos worker process: a Runner whose turns take a random while. It is killed, frozen and
 * restarted by the chaos orchestrator; SIGTERM closes it gracefully.
 */
import { BullDoorbell, openConnection, Runner, threadQueue } from '@tributary/queue';
import { chaosQueueConfig } from './chaos-config.js';
import { DroppingDoorbell } from './dropping-doorbell.js';

const redis = openConnection(process.env.REDIS_URL!, { kind: 'patient' });
const config = chaosQueueConfig(process.env.CHAOS_PREFIX!, Number(process.env.CHAOS_DOORBELL_QUEUES ?? '1'));
const bull = new BullDoorbell(redis, config);
const doorbell = new DroppingDoorbell(bull, Number(process.env.CHAOS_DROP ?? '0'));
const queue = threadQueue(redis, config, doorbell);

const runner = new Runner({
  queue,
  doorbell,
  connection: redis,
  replies: {
    deliver: async ({ id }) => Promise.reject(new Error(`reply ${id}: the chaos turns commit no replies`)),
  },
  concurrency: 4,
  handler: async (_batch, signal) => {
    // Sleeps on purpose: the turn stands in for an agent's work, mostly short, sometimes long.
    const ms = Math.random() < 0.05 ? 200 + Math.random() * 800 : Math.random() * 30;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
    return { reply: `slept ${Math.round(ms)} ms`, stopReason: 'end_turn' };
  },
});

process.once('SIGTERM', () => {
  void runner
    .close()
    .then(() => bull.close())
    .finally(() => {
      redis.disconnect();
      process.exit(0);
    });
});

await runner.start();
process.send?.('ready');
