import type { WorkerConfig } from '@tributary/config';
import type { Metrics } from '@tributary/observability';
import type { Store } from '@tributary/queue';
import type { Logger } from 'pino';
import type { AgentIsolation } from '../agents/agent-isolation.js';
import { AgentWarden } from './agent-warden.js';

export interface GuardedWorker {
  readonly warden: AgentWarden;
  /** Settles when the worker can no longer keep its guarantees: the warden is gone, or revoked it. */
  readonly failed: Promise<Error>;
  /** Settles, with why, when the warden revoked the worker: its threads must be handed back. */
  readonly revoked: Promise<string>;
}

/**
 * Starts the worker's agent warden (docs/adr/0037), before any agent: from the first spawn on, a worker
 * that dies or freezes leaves none behind. Where an agent host runs the agents, it runs them only
 * under the warden's lease, and kills them when it breaks.
 */
export async function startWarden(
  config: Readonly<WorkerConfig>,
  store: Store,
  owner: string,
  sandbox: AgentIsolation['sandbox'],
  metrics: Pick<Metrics, 'workerRevocationsTotal'>,
  logger: Logger,
): Promise<GuardedWorker> {
  const failure = settlesOnce<Error>();
  const revocation = settlesOnce<string>();
  const warden = await AgentWarden.start(
    {
      redisUrl: config.redisUrl,
      prefix: store.config.prefix,
      owner,
      presenceTtlMs: config.presenceTtlMs,
      stallToleranceMs: config.stallToleranceMs,
      takesDirect: store.config.affinity,
      ...(sandbox.kind === 'agent-host' ? { agentHostSocket: config.agentHostSocket } : {}),
    },
    logger.child({ owner }),
    {
      revoked: (why) => {
        metrics.workerRevocationsTotal.inc();
        // Its agents are dead and its presence gone: whatever it runs now, another worker may too.
        logger.error({ why }, 'the agent warden revoked this worker; handing its threads back and stopping');
        revocation.settle(why);
        failure.settle(new Error(`the agent warden revoked this worker: ${why}`));
      },
      lost: (error) => {
        logger.error({ err: error }, 'the agent warden is gone; stopping this worker so it can be restarted');
        failure.settle(error);
      },
    },
  );
  return { warden, failed: failure.settled, revoked: revocation.settled };
}

/** A value settled once, by whichever event comes first (later ones are ignored). */
function settlesOnce<T>(): { settled: Promise<T>; settle(value: T): void } {
  let settle: (value: T) => void = () => {};
  const settled = new Promise<T>((resolve) => {
    settle = resolve;
  });
  return { settled, settle: (value) => settle(value) };
}
