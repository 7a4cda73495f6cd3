import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AgentHost, containerOnly, localLauncher } from '@tributary/acp';
import { loadAgentHostConfig } from '@tributary/config';
import { createLogger, exitWhenWritten } from '@tributary/observability';
import { localSandbox } from '@tributary/worker';
import { type Command, refuseArguments } from './command-line.js';
import { untilSignal } from './until-signal.js';

/**
 * `tributary agent-host`: the agents' own container beside a worker (docs/adr/0045). Starts agents for
 * the worker over AGENT_HOST_SOCKET, in this container's sandbox, only while the worker's warden holds
 * its lease; kills them all when the lease breaks or stalls. Runs until SIGTERM/SIGINT.
 */
export const agentHostCommand: Command = {
  async run(argv) {
    refuseArguments('agent-host', argv);
    const config = loadAgentHostConfig(process.env);
    const logger = createLogger(config.logLevel);
    const local = await localSandbox(config);
    // Unsandboxed here, this container is the agents' isolation from the worker.
    const sandbox = local.kind === 'off' ? containerOnly : local;
    if (sandbox.kind === 'off') {
      logger.warn(
        { isolation: sandbox.describe },
        'agents in this container are not isolated from each other; it holds none of the worker’s secrets',
      );
    }
    await mkdir(dirname(config.agentHostSocket), { recursive: true });
    const host = new AgentHost({
      socketPath: config.agentHostSocket,
      sandbox,
      launcher: localLauncher(sandbox, logger),
      logger,
    });
    await host.listen();
    await untilSignal(logger);
    await host.close();
    exitWhenWritten(logger, 0);
  },
};
