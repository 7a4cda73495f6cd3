import { loadIngressConfig } from '@tributary/config';
import { discoverBotIdentities, startIngress, webhookDefinitions } from '@tributary/ingress';
import { createLogger, createMetrics, platformCallHooks } from '@tributary/observability';
import { createPlatformClients } from '@tributary/platforms';
import { type Command, refuseArguments } from './command-line.js';
import { untilSignal } from './until-signal.js';

/** `tributary ingress`: serves the webhooks until SIGTERM/SIGINT, then drains requests and exits. */
export const ingressCommand: Command = {
  async run(argv) {
    refuseArguments('ingress', argv);
    const config = loadIngressConfig(process.env);
    const logger = createLogger(config.logLevel);
    const metrics = createMetrics(undefined, { logger });
    const clients = createPlatformClients(config.platforms, platformCallHooks(metrics, logger));
    // Before listening: without our identity every channel mention would be ignored.
    const identities = await discoverBotIdentities(config.platforms, clients, logger);
    const ingress = await startIngress(config, {
      logger,
      webhooks: webhookDefinitions(config.platforms, identities, config),
      clients,
      metrics,
    });
    await untilSignal(logger);
    await ingress.close();
  },
};
