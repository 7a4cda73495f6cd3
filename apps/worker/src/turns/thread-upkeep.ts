import type { Metrics } from '@tributary/observability';
import type { Store } from '@tributary/queue';
import type { Logger } from 'pino';
import type { WorkerAgents } from '../agents/agent-pool-start.js';
import { startRoomSweep } from '../rooms/room-expiry.js';
import type { RunningTurns } from './running-turns.js';
import type { SessionContinuity } from './session-continuity.js';

/** How often sessions kept for threads that moved elsewhere are looked for (behind the `moved` message). */
const MOVED_CHECK_MS = 10_000;

/** Raised by `/cancel`: the turn ends `cancelled`, its batch is committed, buffered messages run next. */
export class CancelledByUser extends Error {
  override name = 'CancelledByUser';
}

export interface ThreadUpkeep {
  /** Stops the periodic checks (the control channel stays until `closeControls`). */
  stop(): void;
  closeControls(): Promise<void>;
}

/**
 * What a worker does for its threads between their turns: it follows the control channel (`/cancel`
 * and steers reach the running turn; a thread taken by another worker releases the session kept here),
 * closes the sessions of threads that moved without a word, and deletes the rooms of expired threads.
 */
export async function keepThreads(
  store: Store,
  owner: string,
  {
    agents,
    running,
    continuity,
  }: { agents: WorkerAgents; running: RunningTurns; continuity: SessionContinuity },
  metrics: Pick<Metrics, 'workspaceBytes' | 'workspacesExpiredTotal'>,
  logger: Logger,
): Promise<ThreadUpkeep> {
  const controls = await store.controls.subscribe((message) => {
    const { thread } = message;
    if (message.action === 'cancel') {
      running.cancel(thread, new CancelledByUser('cancelled by the user'));
    } else if (message.action === 'steer') {
      running.poke(thread);
    } else if (message.from === owner && !running.has(thread)) {
      // Another worker took the thread: the session kept here for it is an agent process for nothing.
      void continuity
        .release(thread)
        .catch((error: unknown) =>
          logger.warn({ err: error, thread }, 'session of a moved thread not closed'),
        );
    }
  });
  const movedCheck = setInterval(() => {
    continuity
      .releaseMoved(owner, (thread) => running.has(thread))
      .then((released) => {
        if (released > 0)
          logger.info({ released }, 'closed the sessions of threads that moved to other workers');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'moved sessions not checked; trying again'));
  }, MOVED_CHECK_MS);
  movedCheck.unref();
  const stopRoomSweep = startRoomSweep({
    rooms: agents.rooms,
    releaseSessions: (expired) => continuity.releaseExpired(expired, (thread) => running.has(thread)),
    expired: (thread) => store.queue.turns.expired(thread),
    idleTtlMs: store.config.idleTtlMs,
    logger: logger.child({ component: 'workspaces' }),
    swept: ({ bytes, deleted }) => {
      metrics.workspaceBytes.set(bytes);
      metrics.workspacesExpiredTotal.inc(deleted);
    },
  });
  return {
    stop: () => {
      clearInterval(movedCheck);
      stopRoomSweep();
    },
    closeControls: () => controls.close(),
  };
}
