/**
 * A benchmark's ingress in a process of its own, as in a deployment: forked with the Redis URL and the
 * key prefix in its environment, it enqueues a message to each thread of every list its parent sends
 * and answers `sent` once all are accepted, so a burst of enqueues does not hold the parent's event
 * loop, which measures dispatch.
 */
import { Store } from '@tributary/queue';

const url = process.env.ENQUEUER_REDIS_URL;
const prefix = process.env.ENQUEUER_PREFIX;
if (!url || !prefix || !process.send)
  throw new Error('fork this with ENQUEUER_REDIS_URL and ENQUEUER_PREFIX');
const store = Store.open({ url, connection: { kind: 'patient' }, queue: { prefix, affinity: false } });
let sent = 0;
process.on('message', (threads: string[]) => {
  void Promise.all(
    threads.map((thread) => store.queue.intake.enqueue(thread, { id: `e${sent++}`, body: 'x' })),
  )
    .then(() => process.send?.('sent'))
    .catch((error: unknown) => {
      process.stderr.write(`enqueuer: ${String(error)}\n`);
      process.exit(1);
    });
});
process.on('disconnect', () => void store.close().then(() => process.exit(0)));
process.send('ready');
