import type { SessionPool, TurnResult } from '@tributary/acp';
import { DEFAULT_ROUTE, type ProgressDisplay } from '@tributary/config';
import type { SecretScrubber } from '@tributary/observability';
import { type ArrivalEvent, arrivalFromBody } from '@tributary/packing';
import { messageRefOf } from '@tributary/platforms';
import {
  type Batch,
  FinalTurnError,
  type Outbound,
  ROUTE_WAIT_NOTICE_MS,
  type SpentUsage,
  type TurnAbortedError,
  TurnFailedError,
  type TurnHandler,
  TurnNotStartedError,
} from '@tributary/queue';
import type { Logger } from 'pino';
import type { AttachmentContents } from '../attachments/attachment-contents.js';
import { type OutboundMessage, toOutbound } from '../replies/outbox.js';
import type { StreamFactory } from '../replies/reply-stream.js';
import { type RoomBudget, RoomOverBudget } from '../rooms/room-budget.js';
import type { FreshSessionSources } from './fresh-session-context.js';
import { RouteBudgetSpent, type RouteSpending } from './route-spending.js';
import { RouteAtLimit, type RouteTurnSlots } from './route-turn-slots.js';
import type { RunningTurns } from './running-turns.js';
import type { SessionContinuity } from './session-continuity.js';
import type { ThreadProfiles } from './thread-profiles.js';
import { type Dispatch, dispatchTurn, TurnTimedOut } from './turn-dispatch.js';
import { agentDidNotStart, describeTurnFailure, SLOW_START_NOTICE } from './turn-failure.js';
import type { TurnObserver } from './turn-observer.js';
import type { TurnEnding, TurnSignalListener } from './turn-signals.js';
import type { SteeringDeps } from './turn-steering.js';
import type { WatchdogLimits } from './turn-watchdog.js';

export interface TurnHandlerDeps {
  pool: SessionPool;
  continuity: SessionContinuity;
  /** What a fresh session is given back: the thread's parent message and complete batches. */
  fresh: FreshSessionSources;
  limits: WatchdogLimits;
  logger: Logger;
  /** The running turn of each thread this worker holds, so `/cancel` can reach it. */
  running: RunningTurns;
  observer?: TurnObserver;
  onSignal?: TurnSignalListener;
  /** A placeholder the reply streams into, where the thread's platform can edit messages. */
  stream?: StreamFactory;
  /** Downloads the platform files the events link to, for this attempt; without it they stay links. */
  attachments?: AttachmentContents;
  /** Where tool calls and plans show: a `progress` signal (reactions), a status line in the stream. Default all. */
  progress?: ProgressDisplay;
  /** Counts turns re-run in a fresh session because the agent ended one at once after a cancel. */
  onRepair?: () => void;
  /** Steering (docs/adr/0040); without it no turn takes steers. */
  steering?: SteeringDeps;
  /** How long a batch waits for an agent that does not start before its thread is told (ms). */
  slowStartNoticeMs: number;
  /** Blanks the worker's secrets from progress lines (tool titles, plans), which never reach the commit. */
  secrets: Pick<SecretScrubber, 'scrub'>;
  /** Measures the thread's room after each turn the agent ran (docs/adr/0046). */
  budget?: Pick<RoomBudget, 'afterTurn'>;
  /** Each running thread's route, read as its turn starts (docs/adr/0058). */
  profiles?: Pick<ThreadProfiles, 'load' | 'release'>;
  /** What each route's turns spend, and its daily token budget (docs/adr/0059). */
  spending?: Pick<RouteSpending, 'admit' | 'spent'>;
  /** Each route's limit on concurrent turns across the fleet (docs/adr/0062). */
  slots?: Pick<RouteTurnSlots, 'take' | 'free' | 'leave'>;
}

const CANCELLED_PARTIAL = 'This turn was cancelled, so the reply above may be incomplete.';
/** The reply of a turn cancelled before the agent said anything; it takes the reply's place. */
const CANCELLED_EMPTY = '⚠️ This turn was cancelled before the agent replied.';

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

/** Whether an abort reason says the lease is gone: another worker may claim the thread any moment. */
function leaseLost(reason: unknown): boolean {
  return (reason as Partial<TurnAbortedError> | undefined)?.why === 'lease-lost';
}

/**
 * One turn: pack the batch into one prompt, run it on the thread's session, and report the reply and
 * stop reason for the batch record, with the outbound messages the commit puts in the thread's reply
 * outbox (delivered after the commit, whatever happens to the agent). The turn is registered in
 * `running` while it runs, and aborted (its agent killed) when the lease is.
 */
export function createTurnHandler(deps: TurnHandlerDeps): TurnHandler {
  const { pool, running } = deps;
  return async (batch, leaseSignal) => {
    const thread = batch.lease.thread;
    const log = deps.logger.child({ thread, batchId: batch.id, fence: batch.lease.fence });
    const events = parseEvents(batch);
    const target = messageRefOf(events.at(-1)!);
    // Registered before the session is attached, so a `/cancel` sent while it starts is not lost.
    const turn = new AbortController();
    const onLeaseAbort = () => {
      // The thread goes to another worker now (lost lease, hand-back at shutdown, a drain or a
      // revocation): cancelling politely could let the agent's tools run on beside the next run.
      // The kill is sent here, before the runner hands the thread back.
      void pool.kill(thread);
      turn.abort(leaseSignal.reason);
    };
    leaseSignal.addEventListener('abort', onLeaseAbort, { once: true });
    running.start(thread, turn, { batchId: batch.id, fence: batch.lease.fence, target });
    const run: Dispatch = {
      batch,
      events,
      target,
      log,
      turn,
      signal: (kind, extra = {}) => deps.onSignal?.({ kind, thread, batchId: batch.id, target, ...extra }),
    };
    const started = performance.now();
    let ending: TurnEnding = 'failed';
    try {
      const route = (await deps.profiles?.load(thread))?.route ?? DEFAULT_ROUTE.route;
      const slot = { held: false };
      const outcome = await attempt(deps, run, route, slot).finally(() => {
        leaseSignal.removeEventListener('abort', onLeaseAbort);
        deps.profiles?.release(thread);
      });
      // Freed as the turn ends, before its commit: the route's next waiting thread starts meanwhile. A
      // thread whose lease went elsewhere keeps its slot for the next owner, which re-takes it.
      if (slot.held && leaseSignal.aborted) deps.slots?.leave(thread);
      else if (slot.held) await deps.slots?.free(route, thread, log);
      if ('error' in outcome && outcome.error instanceof RouteAtLimit) ending = 'waiting';
      const seconds = (performance.now() - started) / 1000;
      // Whatever becomes of the batch, the tokens its turn spent were spent: a turn whose lease was
      // lost is counted too, and its re-run elsewhere again.
      const usage = 'result' in outcome ? await deps.spending?.spent(route, outcome.result, log) : undefined;
      // Lost lease or shutdown: another owner re-delivers the batch, so this one says nothing.
      if (leaseSignal.aborted) {
        ending = 'handed-over';
        deps.observer?.ended(leaseLost(leaseSignal.reason) ? 'lease_lost' : 'shutdown', seconds);
        throw leaseSignal.reason;
      }
      const report = await reportOf(deps, run, outcome, seconds, usage);
      ending = report.stopReason === 'cancelled' ? 'cancelled' : 'answered';
      return report;
    } finally {
      // Only now: until the session is recorded as this worker's (by the commit; the check reads the
      // record's fence too), a check for moved threads must not take it for one that moved away.
      running.end(thread, turn);
      run.signal('finished', { ending });
    }
  };
}

type Attempt = { result: TurnResult } | { error: unknown };

/**
 * Runs the batch's turn. A batch delivered before (a crash, a hand-back, a failure, or a part of a
 * batch that was split) runs in a fresh session seeded from committed history: the session the
 * earlier delivery used may already hold its prompt, and the model must see each message once
 * (docs/adr/0037). An agent that ends a turn at once with nothing right after a cancel gets the turn
 * again, once, in a fresh session, so its replies do not lag a turn.
 */
async function attempt(
  deps: TurnHandlerDeps,
  run: Dispatch,
  route: string,
  slot: { held: boolean },
): Promise<Attempt> {
  const dispatchDeps = { ...deps, progress: deps.progress ?? 'all' };
  const { batch, log, turn } = run;
  try {
    slot.held = (await deps.slots?.take(route, batch.lease.thread, log)) === true;
    await deps.spending?.admit(route, log);
    const deliveredBefore = batch.deliveries > 1 || batch.type === 'Continuation';
    let result = await dispatchTurn(dispatchDeps, run, deliveredBefore);
    if (result.emptyAfterCancel && !turn.signal.aborted) {
      log.warn(
        { sessionId: result.sessionId },
        'the agent ended the turn at once without a word after a cancel; running it again in a fresh session',
      );
      deps.onRepair?.();
      // Messages steered into the first attempt are the batch's now: the fresh session gets them too.
      run.events = parseEvents(batch);
      result = await dispatchTurn(dispatchDeps, run, true);
    }
    return { result };
  } catch (error) {
    return { error };
  }
}

/**
 * What the commit gets of a turn that ran here to its end: the reply and the outbound messages, or
 * the error that says how the batch goes on (waits for its room, dead-lettered, retried, split).
 */
async function reportOf(
  deps: TurnHandlerDeps,
  run: Dispatch,
  outcome: Attempt,
  seconds: number,
  usage: SpentUsage | undefined,
) {
  const { batch, log, turn } = run;
  const thread = batch.lease.thread;
  const outbound = (kind: OutboundMessage['kind'], text: string, stopReason?: string) =>
    toOutbound({
      thread,
      batchId: batch.id,
      kind,
      text,
      target: run.target,
      ...(stopReason ? { stopReason } : {}),
    });
  const overBudget = run.prompted ? await deps.budget?.afterTurn(thread, log) : undefined;
  if ('error' in outcome && outcome.error instanceof RouteAtLimit) {
    // Rung at once when a slot of its route is freed; the put-back delay is the backstop. Told only
    // when the wait has lasted, counted from its oldest message: it may have waited in its route's
    // line before (docs/adr/0064). A busy route's usual wait is one turn.
    throw new TurnNotStartedError(
      outcome.error.message,
      [outbound('notice', outcome.error.notice)],
      ROUTE_WAIT_NOTICE_MS,
      run.prompted === true,
      Math.min(...batch.messages.map((message) => message.acceptedAt)),
    );
  }
  if (
    'error' in outcome &&
    (outcome.error instanceof RoomOverBudget || outcome.error instanceof RouteBudgetSpent)
  ) {
    // The thread's messages wait, kept, for its room to be cleaned or its route's budget to allow
    // them (read again at each retry); each batch is told once.
    throw new TurnNotStartedError(
      outcome.error.message,
      [outbound('notice', outcome.error.notice)],
      0,
      run.prompted === true,
    );
  }
  if (turn.signal.reason instanceof TurnTimedOut) {
    deps.observer?.ended('timeout', seconds);
    log.warn({ err: 'error' in outcome ? outcome.error : undefined }, 'turn timed out; batch dead-lettered');
    const notice = `The agent showed no activity for ${Math.round(deps.limits.turnTimeoutMs / 1000)} s, so this turn was stopped. Later messages will still be answered; resend this one if it still matters.`;
    // Not split: each message alone could take the whole timeout again.
    throw new FinalTurnError(
      `turn timed out: ${turn.signal.reason.message}`,
      [outbound('notice', notice)],
      false,
    );
  }
  if ('error' in outcome && agentDidNotStart(outcome.error)) {
    deps.observer?.ended('not_started', seconds);
    throw new TurnNotStartedError(
      outcome.error.message,
      [outbound('notice', SLOW_START_NOTICE)],
      deps.slowStartNoticeMs,
      run.prompted === true,
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
  const session = deps.continuity.answered(thread);
  return {
    reply: text,
    stopReason,
    outbound: [
      ...replyMessages(outbound, text, stopReason),
      ...(overBudget === undefined ? [] : [outbound('notice', overBudget)]),
    ],
    ...(run.deliveredThrough === undefined ? {} : { deliveredThrough: run.deliveredThrough }),
    ...(session === undefined ? {} : { session }),
    ...(usage === undefined ? {} : { usage }),
  };
}

/** What the thread is shown of an answered turn; a cancelled one always says it was cancelled. */
function replyMessages(
  outbound: (kind: OutboundMessage['kind'], text: string, stopReason?: string) => Outbound,
  text: string,
  stopReason: string,
): Outbound[] {
  if (stopReason !== 'cancelled') return [outbound('reply', text, stopReason)];
  if (text === '') return [outbound('reply', CANCELLED_EMPTY, stopReason)];
  return [outbound('reply', text, stopReason), outbound('notice', CANCELLED_PARTIAL)];
}
