import type { AgentInfo, ContentBlock, OpenedSession, SessionPool, TurnResult } from '@tributary/acp';
import type { ProgressDisplay } from '@tributary/config';
import type { SecretScrubber } from '@tributary/observability';
import { type ArrivalEvent, envelopeTokens, packBatch } from '@tributary/packing';
import { type MessageRef, platformOfThread, streamRecipientOf } from '@tributary/platforms';
import type { Batch } from '@tributary/queue';
import type { Logger } from 'pino';
import type { AttachmentContents, ResolvedAttachments } from '../attachments/attachment-contents.js';
import type { StreamFactory } from '../replies/reply-stream.js';
import { type FreshSessionSources, freshSessionContext } from './fresh-session-context.js';
import type { RunningTurns } from './running-turns.js';
import type { SessionContinuity } from './session-continuity.js';
import type { TurnObserver } from './turn-observer.js';
import { progressOf } from './turn-progress.js';
import type { TurnSignal } from './turn-signals.js';
import { type SteeringDeps, TurnSteering } from './turn-steering.js';
import { TurnWatchdog, type WatchdogLimits } from './turn-watchdog.js';

export interface DispatchDeps {
  pool: SessionPool;
  continuity: SessionContinuity;
  fresh: FreshSessionSources;
  limits: WatchdogLimits;
  observer?: TurnObserver;
  stream?: StreamFactory;
  attachments?: AttachmentContents;
  progress: ProgressDisplay;
  /** Steering (docs/adr/0040); without it no turn takes steers. */
  steering?: SteeringDeps;
  /** Where the control channel's `steer` finds a turn that takes steers. */
  running: RunningTurns;
  /** Blanks the worker's secrets from progress lines (tool titles, plans), which never reach the commit. */
  secrets: Pick<SecretScrubber, 'scrub'>;
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
  /** Set by a turn that took steers: the stream id of the last message the agent received. */
  deliveredThrough?: string;
  /** Set once a prompt of this batch was handed to an agent (a repair runs a second one). */
  prompted?: boolean;
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
  const info = await deps.pool.agentInfo();
  const caps = info.promptCapabilities;
  const context = session.path === 'new' ? await freshSessionContext(thread, deps.fresh, caps) : undefined;
  const files = await deps.attachments?.resolve(events, caps, turn.signal);
  // Nothing is sent into a running turn unless the route steers and the agent says it takes steers.
  const steers = info.steering && deps.steering?.on(thread) === true;
  try {
    return await runPrompt(deps, run, {
      session,
      context,
      events: files?.events ?? events,
      caps,
      files,
      steers,
    });
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
  steers: boolean;
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
  const stream = deps.stream?.(thread, batch.id, run.target, streamRecipientOf(events.at(-1)!));
  const { progress } = deps;
  const steering = prompt.steers ? startSteering(deps, run, prompt) : undefined;
  run.prompted = true;
  try {
    const result = deps.pool.runTurn(thread, blocks, {
      sessionId: session.sessionId,
      signal: turn.signal,
      onUpdate: (event) => {
        // The agent answers only once it has read the whole prompt: its files are no longer held for it.
        files?.release();
        watchdog.activity();
        if (event.kind === 'agent_message_chunk' && event.content.type === 'text') {
          stream?.chunk(event.content.text);
        }
        const activity = progressOf(event, deps.secrets);
        if (activity === undefined) return;
        if (progress === 'all' || progress === 'reactions') run.signal('progress', { activity });
        if (progress === 'all' || progress === 'status') stream?.status(activity);
      },
    });
    // The prompt is on the wire: what waits now, and each later arrival, is offered to the turn.
    steering?.poke();
    return await result;
  } finally {
    watchdog.stop();
    if (steering) await endSteering(deps.running, run, steering);
    deps.observer?.carried(platformOfThread(thread), batch.messages.length);
    await stream?.finish();
  }
}

function startSteering(deps: DispatchDeps, run: Dispatch, prompt: Prompt): TurnSteering {
  const { batch, turn, log } = run;
  const steering = new TurnSteering(
    {
      take: deps.steering!.take,
      pool: deps.pool,
      ...(deps.attachments ? { attachments: deps.attachments } : {}),
      ...(deps.observer ? { observer: deps.observer } : {}),
    },
    { batch, sessionId: prompt.session.sessionId, caps: prompt.caps, signal: turn.signal, log },
  );
  deps.running.steer(batch.lease.thread, turn, steering);
  return steering;
}

async function endSteering(running: RunningTurns, run: Dispatch, steering: TurnSteering): Promise<void> {
  running.unsteer(run.batch.lease.thread, run.turn);
  await steering.close();
  run.deliveredThrough = steering.deliveredThrough;
}
