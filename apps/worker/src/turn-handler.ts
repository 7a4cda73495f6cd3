import type { SessionPool, TurnResult } from '@tributary/acp';
import type { ProgressDisplay } from '@tributary/config';
import { type ArrivalEvent, arrivalFromBody, envelopeTokens, packBatch } from '@tributary/packing';
import { platformOfThread } from '@tributary/platforms';
import {
  type Batch,
  FinalTurnError,
  type TurnAbortedError,
  TurnFailedError,
  type TurnHandler,
} from '@tributary/queue';
import type { Logger } from 'pino';
import type { AttachmentContents, ResolvedAttachments } from './attachment-contents.js';
import { type FreshSessionSources, freshSessionContext } from './fresh-session-context.js';
import { type OutboundMessage, type ReplyTarget, toOutbound } from './outbox.js';
import type { ReplyStream } from './reply-stream.js';
import type { SessionContinuity } from './session-continuity.js';
import { describeTurnFailure } from './turn-failure.js';
import type { TurnObserver } from './turn-observer.js';
import { progressOf } from './turn-progress.js';
import type { TurnEnding, TurnSignal, TurnSignalListener } from './turn-signals.js';
import { TurnWatchdog, type WatchdogLimits } from './turn-watchdog.js';

export interface TurnHandlerDeps {
  pool: SessionPool;
  continuity: SessionContinuity;
  /** What a fresh session is given back: the thread's parent message and complete batches. */
  fresh: FreshSessionSources;
  limits: WatchdogLimits;
  logger: Logger;
  /** The running turn of each thread this worker holds, so `/cancel` can reach it. */
  running: Map<string, AbortController>;
  observer?: TurnObserver;
  onSignal?: TurnSignalListener;
  /** A placeholder the reply streams into, where the thread's platform can edit messages. */
  stream?: (thread: string, batchId: string, target: ReplyTarget) => ReplyStream | undefined;
  /** Downloads the platform files the events link to, for this attempt; without it they stay links. */
  attachments?: AttachmentContents;
  /** Where tool calls and plans show: a `progress` signal (reactions), a status line in the stream. Default all. */
  progress?: ProgressDisplay;
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
    ...(event.replyRef === undefined ? {} : { replyRef: event.replyRef }),
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

/**
 * One turn: pack the batch into one prompt, run it on the thread's session, and report the reply and
 * stop reason for the batch record, with the outbound messages the commit puts in the thread's reply
 * outbox (delivered after the commit, whatever happens to the agent). A fresh session's prompt starts
 * with the broker-origin blocks restoring the thread's parent message and complete batches.
 */
export function createTurnHandler(deps: TurnHandlerDeps): TurnHandler {
  const { pool, continuity, limits, running, progress = 'all' } = deps;
  return async (batch, leaseSignal) => {
    const thread = batch.lease.thread;
    const log = deps.logger.child({ thread, batchId: batch.id, fence: batch.lease.fence });
    const events = parseEvents(batch);
    const target = replyTarget(events.at(-1)!);
    // Registered before the session is attached, so a `/cancel` sent while it starts is not lost.
    const turn = new AbortController();
    const onLeaseAbort = () => turn.abort(leaseSignal.reason);
    leaseSignal.addEventListener('abort', onLeaseAbort, { once: true });
    running.set(thread, turn);
    const signal = (
      kind: TurnSignal['kind'],
      extra: Pick<TurnSignal, 'quietMs' | 'ending' | 'activity'> = {},
    ) => deps.onSignal?.({ kind, thread, batchId: batch.id, target, ...extra });
    const outbound = (kind: OutboundMessage['kind'], text: string, stopReason?: string) =>
      toOutbound({ thread, batchId: batch.id, kind, text, target, ...(stopReason ? { stopReason } : {}) });
    const started = performance.now();
    let outcome: { result: TurnResult } | { error: unknown };
    let files: ResolvedAttachments | undefined;
    let ending: TurnEnding = 'failed';
    try {
      const session = await continuity.attach(thread, batch.generation, batch.lease);
      const caps = (await pool.agentInfo()).promptCapabilities;
      const context =
        session.path === 'new' ? await freshSessionContext(thread, deps.fresh, caps) : undefined;
      files = await deps.attachments?.resolve(events, caps, turn.signal);
      const blocks = [...(context?.blocks ?? []), ...packBatch(files?.events ?? events, caps)];
      const now = Date.now();
      const tokensPerEvent = events.map(envelopeTokens);
      const waitsMs = batch.messages.map((m) => now - m.acceptedAt);
      deps.observer?.dispatched({
        platform: platformOfThread(thread),
        tokensPerEvent,
        blocks: blocks.length,
        waitsMs,
      });
      log.info(
        {
          sessionId: session.sessionId,
          sessionPath: session.path,
          type: batch.type,
          deliveries: batch.deliveries,
          events: events.length,
          blocks: blocks.length,
          historyTurns: context?.historyTurns ?? 0,
          tokensPerEvent,
          waitPerEventMs: waitsMs,
          dispatchedAt: new Date(now).toISOString(),
        },
        'dispatch',
      );
      const watchdog = new TurnWatchdog(limits, (level, quietMs) => {
        if (level === 'timeout') turn.abort(new TurnTimedOut(`no agent activity for ${quietMs} ms`));
        else signal(level === 'soft' ? 'stall-soft' : 'stall-hard', { quietMs });
      });
      signal('started');
      const stream = deps.stream?.(thread, batch.id, target);
      try {
        outcome = {
          result: await pool.runTurn(thread, blocks, {
            signal: turn.signal,
            onUpdate: (event) => {
              // The agent answers only once it has read the whole prompt: its files are no longer held for it.
              files?.release();
              watchdog.activity();
              if (event.kind === 'agent_message_chunk' && event.content.type === 'text') {
                stream?.chunk(event.content.text);
              }
              const activity = progressOf(event);
              if (activity === undefined) return;
              if (progress === 'all' || progress === 'reactions') signal('progress', { activity });
              if (progress === 'all' || progress === 'status') stream?.status(activity);
            },
          }),
        };
      } finally {
        watchdog.stop();
        await stream?.finish();
      }
    } catch (error) {
      outcome = { error };
    } finally {
      files?.release();
      leaseSignal.removeEventListener('abort', onLeaseAbort);
      if (running.get(thread) === turn) running.delete(thread);
    }

    const seconds = (performance.now() - started) / 1000;
    try {
      // Lost lease or shutdown: another owner re-delivers the batch, so this one says nothing.
      if (leaseSignal.aborted) {
        ending = 'handed-over';
        const why = (leaseSignal.reason as Partial<TurnAbortedError> | undefined)?.why;
        deps.observer?.ended(why === 'shutdown' ? 'shutdown' : 'lease_lost', seconds);
        throw leaseSignal.reason;
      }
      if (turn.signal.reason instanceof TurnTimedOut) {
        deps.observer?.ended('timeout', seconds);
        log.warn(
          { err: 'error' in outcome ? outcome.error : undefined },
          'turn timed out; batch dead-lettered',
        );
        const notice = `The agent showed no activity for ${Math.round(limits.turnTimeoutMs / 1000)} s, so this turn was stopped. Later messages will still be answered; resend this one if it still matters.`;
        // Not split: each message alone could take the whole timeout again.
        throw new FinalTurnError(
          `turn timed out: ${turn.signal.reason.message}`,
          [outbound('notice', notice)],
          false,
        );
      }
      if ('error' in outcome) {
        deps.observer?.ended('error', seconds);
        const failure = describeTurnFailure(outcome.error);
        throw new TurnFailedError(
          failure.reason,
          [outbound('notice', failure.notice)],
          failure.final,
          failure.splits,
        );
      }
      const { stopReason, text } = outcome.result;
      deps.observer?.ended(stopReason, seconds);
      log.info({ stopReason, replyChars: text.length }, 'turn finished');
      await continuity.answered(thread, batch.lease);
      ending = stopReason === 'cancelled' ? 'cancelled' : 'answered';
      const messages = [outbound('reply', text, stopReason)];
      if (stopReason === 'cancelled' && text !== '') {
        messages.push(outbound('notice', 'This turn was cancelled, so the reply above may be incomplete.'));
      }
      return { reply: text, stopReason, outbound: messages };
    } finally {
      signal('finished', { ending });
    }
  };
}
