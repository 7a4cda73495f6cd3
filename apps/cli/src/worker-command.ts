import { loadWorkerConfig } from '@tributary/config';
import { createLogger } from '@tributary/observability';
import { startWorker } from '@tributary/worker';
import { type Command, refuseArguments } from './command-line.js';
import { untilSignal } from './until-signal.js';

/** `tributary worker`: runs until SIGTERM/SIGINT, then hands its threads back and exits. */
export const workerCommand: Command = {
  usage: `usage: tributary worker

Claims threads from Redis, drives the ACP agent (AGENT_COMMAND, default the built-in agent) and
delivers its replies; /livez, /readyz and /metrics on METRICS_PORT. Takes no options: it is configured
by environment variables (REDIS_URL, AGENT_*, each platform's bot token; README, "Running a worker").
On SIGTERM or SIGINT it lets running turns finish for SHUTDOWN_GRACE_MS, hands the rest back, exits.`,
  async run(argv) {
    refuseArguments('worker', argv);
    const config = loadWorkerConfig(process.env);
    const logger = createLogger(config.logLevel);
    const worker = await startWorker(config, { logger });
    const failure = await Promise.race([untilSignal(logger).then(() => undefined), worker.failed]);
    // A worker that cannot keep its guarantees hands its threads back at once.
    await worker.close(failure ? { graceMs: 0 } : {});
    // A close cut short by its deadline leaves reconnecting clients behind: they must not keep the
    // process (and a pod's rollout) waiting. A worker that could not go on exits non-zero, so its
    // supervisor restarts it.
    process.exit(failure ? 1 : 0);
  },
};
