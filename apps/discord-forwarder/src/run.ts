import { type Env, loadForwarderConfig } from '@tributary/config';
import { createLogger } from '@tributary/observability';

import { startForwarder } from './forwarder.js';
import { startHealthServer } from './health-server.js';

/**
 * The whole process: runs until SIGTERM/SIGINT (then flushes and resolves) or until the Gateway is lost
 * for good (then flushes and throws). Throws ConfigError before anything starts.
 */
export async function runDiscordForwarder(env: Env = process.env): Promise<void> {
  const config = loadForwarderConfig(env);
  const logger = createLogger(config.logLevel);
  const forwarder = startForwarder(config, { logger });
  const health = await startHealthServer(config.healthPort, config.healthHost, forwarder.connected);
  const address = health.server.address();
  logger.info(
    { port: typeof address === 'object' && address ? address.port : config.healthPort },
    'health endpoints up',
  );
  const outcome = await Promise.race([nextStopSignal(), forwarder.failure]);
  if (typeof outcome === 'string') logger.info({ signal: outcome }, 'shutting down');
  await health.close();
  await forwarder.close();
  if (outcome instanceof Error) throw outcome;
}

function nextStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve(signal);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
