/**
 * A worker process for fleet tests: the real `startWorker` from environment variables, logging JSON to
 * stdout, where every outbound message is also logged as `sent` so the test can read replies. Queue
 * tuning that has no variable (short leases) comes as JSON in TRIBUTARY_TEST_QUEUE.
 */
import { builtInAgentCommand } from '@tributary/agent';
import { loadWorkerConfig } from '@tributary/config';
import { pino } from 'pino';
import { startWorker } from '../../src/worker-service.js';

const logger = pino({ level: 'info' });
const worker = await startWorker(loadWorkerConfig(process.env), {
  logger,
  builtInAgent: builtInAgentCommand(),
  sinks: [{ name: 'test', send: async (message) => logger.info({ message }, 'sent') }],
  queue: JSON.parse(process.env.TRIBUTARY_TEST_QUEUE ?? '{}'),
});
process.once('SIGTERM', () => {
  void worker.close().finally(() => process.exit(0));
});
// As `tributary worker`: a worker that cannot keep its guarantees hands its threads back and exits.
void worker.failed.then(() => worker.close({ graceMs: 0 }).finally(() => process.exit(1)));
