import { builtInAgentCommand } from '@tributary/agent';
import { loadWorkerConfig } from '@tributary/config';
import { createLogger, exitWhenWritten } from '@tributary/observability';
import { startWorker } from '@tributary/worker';
import { type Command, refuseArguments } from './command-line.js';
import { untilSignal } from './until-signal.js';

/** `tributary worker`: runs until SIGTERM/SIGINT, then hands its threads back and exits. */
export const workerCommand: Command = {
  async run(argv) {
    refuseArguments('worker', argv);
    const config = loadWorkerConfig(process.env);
    const logger = createLogger(config.logLevel);
    const worker = await startWorker(config, { logger, builtInAgent: builtInAgentCommand() });
    const failure = await Promise.race([untilSignal(logger).then(() => undefined), worker.failed]);
    // A worker that cannot keep its guarantees hands its threads back at once.
    await worker.close(failure ? { graceMs: 0 } : {});
    // A close cut short by its deadline leaves reconnecting clients behind: they must not keep the
    // process (and a pod's rollout) waiting. A worker that could not go on exits non-zero, so its
    // supervisor restarts it.
    exitWhenWritten(logger, failure ? 1 : 0);
  },
};
