import type { SessionPool, TurnResult } from '@tributary/acp';
import { type ArrivalEvent, arrivalFromBody, envelopeTokens, packBatch } from '@tributary/packing';
import { type Batch, FinalTurnError, type TurnHandler } from '@tributary/queue';
import type { Logger } from 'pino';
import type { Outbox, ReplyTarget } from './outbox.js';
import type { SessionContinuity } from './session-continuity.js';
import type { TurnSignal, TurnSignalListener } from './turn-signals.js';
import { TurnWatchdog, type WatchdogLimits } from './turn-watchdog.js';

export interface TurnHandlerDeps {
  pool: SessionPool;
  continuity: SessionContinuity;
  outbox: Outbox;
  limits: WatchdogLimits;
  logger: Logger;
  /** The running ACP turn of each thread this worker holds, so `/cancel` can reach it. */
  running: Map<string, AbortController>;
  onSignal?: TurnSignalListener;
}

/** Why the broker, not the user, ended a turn. */
class TurnTimedOut extends Error {
  override name = 'TurnTimedOut';
}

function replyTarget(event: ArrivalEvent): ReplyTarget {
  return {
    platform: event.platform,
    channelId: event.channelId,
    ...(event.threadId === undefined ? {} : { threadId: event.threadId }),
    replyToEventId: event.eventId,
  };
}

function parseEvents(batch: Batch): ArrivalEvent[] {
  try {
    return batch.messages.map((m) => arrivalFromBody(m.body));
  } catch (error) {
    // A stored body that is not an event will never become one: no retry can help.
    throw new FinalTurnError(
      `batch holds a message that is not an ArrivalEvent: ${(error as Error).message}`,
    );
  }
}

/** One turn: pack the batch into one prompt, run it on the thread's session, deliver the reply. */
export function createTurnHandler(deps: TurnHandlerDeps): TurnHandler {
  const { pool, continuity, outbox, limits, running } = deps;
  return async (batch, leaseSignal) => {
    const thread = batch.lease.thread;
    const log = deps.logger.child({ thread, batchId: batch.id, fence: batch.lease.fence });
    const events = parseEvents(batch);
    const target = replyTarget(events.at(-1)!);
    const session = await continuity.attach(thread, batch.generation);
    const blocks = packBatch(events, (await pool.agentInfo()).promptCapabilities);
    const now = Date.now();
    log.info(
      {
        sessionId: session.sessionId,
        sessionPath: session.path,
        type: batch.type,
        deliveries: batch.deliveries,
        events: events.length,
        blocks: blocks.length,
        tokensPerEvent: events.map(envelopeTokens),
        waitPerEventMs: batch.messages.map((m) => now - m.acceptedAt),
        dispatchedAt: new Date(now).toISOString(),
      },
      'dispatch',
    );

    const turn = new AbortController();
    const onLeaseAbort = () => turn.abort(leaseSignal.reason);
    leaseSignal.addEventListener('abort', onLeaseAbort, { once: true });
    running.set(thread, turn);
    const signal = (kind: TurnSignal['kind'], quietMs?: number) =>
      deps.onSignal?.({
        kind,
        thread,
        batchId: batch.id,
        target,
        ...(quietMs === undefined ? {} : { quietMs }),
      });
    const watchdog = new TurnWatchdog(limits, (level, quietMs) => {
      if (level === 'timeout') turn.abort(new TurnTimedOut(`no agent activity for ${quietMs} ms`));
      else signal(level === 'soft' ? 'stall-soft' : 'stall-hard', quietMs);
    });
    signal('started');
    let outcome: { result: TurnResult } | { error: unknown };
    try {
      outcome = {
        result: await pool.runTurn(thread, blocks, {
          signal: turn.signal,
          onUpdate: () => watchdog.activity(),
        }),
      };
    } catch (error) {
      outcome = { error };
    } finally {
      watchdog.stop();
      leaseSignal.removeEventListener('abort', onLeaseAbort);
      if (running.get(thread) === turn) running.delete(thread);
      signal('finished');
    }

    // Lost lease or shutdown: another owner re-delivers the batch, so this one says nothing.
    if (leaseSignal.aborted) throw leaseSignal.reason;
    if (turn.signal.reason instanceof TurnTimedOut) {
      log.warn(
        { err: 'error' in outcome ? outcome.error : undefined },
        'turn timed out; batch dead-lettered',
      );
      await outbox.deliver({
        thread,
        batchId: batch.id,
        kind: 'notice',
        text: `The agent showed no activity for ${Math.round(limits.turnTimeoutMs / 1000)} s, so this turn was stopped. Later messages will still be answered; resend this one if it still matters.`,
        target,
      });
      throw new FinalTurnError(`turn timed out: ${turn.signal.reason.message}`);
    }
    if ('error' in outcome) throw outcome.error;
    const { stopReason, text } = outcome.result;
    log.info({ stopReason, replyChars: text.length }, 'turn finished');
    await outbox.deliver({ thread, batchId: batch.id, kind: 'reply', text, target, stopReason });
  };
}
