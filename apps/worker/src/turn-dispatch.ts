import type { AgentInfo, ContentBlock, OpenedSession, SessionPool, TurnResult } from '@tributary/acp';
import type { ProgressDisplay } from '@tributary/config';
import { type ArrivalEvent, envelopeTokens, packBatch } from '@tributary/packing';
import { type MessageRef, platformOfThread } from '@tributary/platforms';
import type { Batch } from '@tributary/queue';
import type { Logger } from 'pino';
import type { AttachmentContents, ResolvedAttachments } from './attachment-contents.js';
import { type FreshSessionSources, freshSessionContext } from './fresh-session-context.js';
import type { ReplyStream } from './reply-stream.js';
import type { SessionContinuity } from './session-continuity.js';
import type { TurnObserver } from './turn-observer.js';
import { progressOf } from './turn-progress.js';
import type { TurnSignal } from './turn-signals.js';
import { TurnWatchdog, type WatchdogLimits } from './turn-watchdog.js';

export interface DispatchDeps {
  pool: SessionPool;
  continuity: SessionContinuity;
  fresh: FreshSessionSources;
  limits: WatchdogLimits;
  observer?: TurnObserver;
  stream?: (thread: string, batchId: string, target: MessageRef) => ReplyStream | undefined;
  attachments?: AttachmentContents;
  progress: ProgressDisplay;
}

/** One batch's turn as the handler runs it, possibly twice (a repair). */
export interface Dispatch {
  batch: Batch;
  events: ArrivalEvent[];
  target: MessageRef;
  log: Logger;
  /** Aborted by `/cancel`, a lost lease, shutdown or the watchdog (with a TurnTimedOut reason). */
  turn: AbortController;
  signal(kind: TurnSignal['kind'], extra?: Pick<TurnSignal, 'quietMs' | 'activity' | 'ending'>): void;
}

/** Why the broker, not the user, ended a turn. */
export class TurnTimedOut extends Error {
  override name = 'TurnTimedOut';
}

/**
 * Attaches the thread's session, packs the batch into one prompt (after the broker-origin blocks a
 * fresh session is seeded with) and runs it, streaming the reply and signalling progress and stalls.
 * `freshSession`: start a new session seeded from committed history instead of the one the thread
 * has, because that one may already hold this batch or is broken.
 */
export async function dispatchTurn(
  deps: DispatchDeps,
  run: Dispatch,
  freshSession: boolean,
): Promise<TurnResult> {
  const { batch, events, turn } = run;
  const thread = batch.lease.thread;
  const session = await deps.continuity.attach(thread, batch.generation, batch.lease, freshSession);
  const caps = (await deps.pool.agentInfo()).promptCapabilities;
  const context = session.path === 'new' ? await freshSessionContext(thread, deps.fresh, caps) : undefined;
  const files = await deps.attachments?.resolve(events, caps, turn.signal);
  try {
    return await runPrompt(deps, run, { session, context, events: files?.events ?? events, caps, files });
  } finally {
    files?.release();
  }
}

interface Prompt {
  session: OpenedSession;
  context: { blocks: ContentBlock[]; historyTurns: number } | undefined;
  /** The batch's events, with the contents of the files that were fetched. */
  events: ArrivalEvent[];
  caps: AgentInfo['promptCapabilities'];
  files: ResolvedAttachments | undefined;
}

async function runPrompt(deps: DispatchDeps, run: Dispatch, prompt: Prompt): Promise<TurnResult> {
  const { batch, events, turn, log } = run;
  const { session, context, files } = prompt;
  const thread = batch.lease.thread;
  const blocks = [...(context?.blocks ?? []), ...packBatch(prompt.events, prompt.caps)];
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
  const watchdog = new TurnWatchdog(deps.limits, (level, quietMs) => {
    if (level === 'timeout') turn.abort(new TurnTimedOut(`no agent activity for ${quietMs} ms`));
    else run.signal(level === 'soft' ? 'stall-soft' : 'stall-hard', { quietMs });
  });
  run.signal('started');
  const stream = deps.stream?.(thread, batch.id, run.target);
  const { progress } = deps;
  try {
    return await deps.pool.runTurn(thread, blocks, {
      sessionId: session.sessionId,
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
        if (progress === 'all' || progress === 'reactions') run.signal('progress', { activity });
        if (progress === 'all' || progress === 'status') stream?.status(activity);
      },
    });
  } finally {
    watchdog.stop();
    await stream?.finish();
  }
}
