import type { ThreadListState } from '@tributary/queue';
import type { AdminStore } from './list-routes.js';

/** The levers on one thread; `cancel-all` and `reset` drop waiting messages, as the chat commands do. */
export const THREAD_ACTIONS = ['pause', 'resume', 'cancel', 'cancel-all', 'reset'] as const;
export type ThreadAction = (typeof THREAD_ACTIONS)[number];

/** The levers on a dead letter or dead reply. */
export const DEAD_ACTIONS = ['redrive', 'discard'] as const;
export type DeadAction = (typeof DEAD_ACTIONS)[number];

/** What became of one item: done (with what it did) or absent (nothing by that id, nothing changed). */
export type Outcome = { outcome: 'done'; detail: string } | { outcome: 'absent' };

const absent: Outcome = { outcome: 'absent' };
/** A control command this Idempotency-Key applied before, whose first answer was not kept. */
const appliedBefore: Outcome = { outcome: 'done', detail: 'applied before with this Idempotency-Key' };
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/**
 * Applies `action` to `thread`; an unknown thread is absent, and nothing is created for it. A control
 * command is applied once per `delivery` (the action's Idempotency-Key, see auditedAction).
 */
export async function threadAction(
  store: AdminStore,
  action: ThreadAction,
  thread: string,
  delivery: string | undefined,
): Promise<Outcome> {
  const { admin, controls } = store;
  switch (action) {
    case 'pause':
      return (await admin.pause(thread))
        ? { outcome: 'done', detail: 'paused: no turn starts until resumed' }
        : absent;
    case 'resume':
      return (await admin.resume(thread)) ? { outcome: 'done', detail: 'resumed' } : absent;
    case 'cancel': {
      if (!(await admin.known(thread))) return absent;
      const cancelled = await controls.cancel(thread, delivery);
      if (cancelled === 'duplicate') return appliedBefore;
      return {
        outcome: 'done',
        detail: cancelled.wasRunning ? 'cancelling the running turn' : 'no turn was running',
      };
    }
    case 'cancel-all': {
      if (!(await admin.known(thread))) return absent;
      const cancelled = await controls.cancelAll(thread, delivery);
      if (cancelled === 'duplicate') return appliedBefore;
      return {
        outcome: 'done',
        detail: `cancelled; dropped ${plural(cancelled.dropped, 'waiting message')}`,
      };
    }
    case 'reset': {
      if (!(await admin.known(thread))) return absent;
      const reset = await controls.reset(thread, delivery);
      if (!reset) return absent;
      if (reset === 'duplicate') return appliedBefore;
      return {
        outcome: 'done',
        detail: `reset; dropped ${plural(reset.dropped, 'waiting message')}, the next turn starts a fresh session`,
      };
    }
  }
}

export async function deadLetterAction(
  store: AdminStore,
  action: DeadAction,
  thread: string,
  batchId: string,
): Promise<Outcome> {
  if (action === 'redrive') {
    const requeued = await store.admin.redrive(thread, batchId);
    return requeued === 0
      ? absent
      : { outcome: 'done', detail: `re-driven: ${plural(requeued, 'message')} queued again` };
  }
  const dropped = await store.admin.discard(thread, batchId);
  return dropped === undefined
    ? absent
    : { outcome: 'done', detail: `discarded with ${plural(dropped, 'message')}` };
}

export async function deadReplyAction(
  store: AdminStore,
  action: DeadAction,
  thread: string,
  id: string,
): Promise<Outcome> {
  const done =
    action === 'redrive'
      ? await store.admin.redriveReply(thread, id)
      : await store.admin.discardReply(thread, id);
  if (!done) return absent;
  return { outcome: 'done', detail: action === 'redrive' ? 're-driven: back in the outbox' : 'discarded' };
}

/**
 * Items one bulk action may take by filter: one list page of them. A filtered page reads a bounded part
 * of the indexes however few items match, so one request's scan is bounded; the page's `next` is where
 * the next request goes on.
 */
export const BULK_MAX = 1_000;

/** The threads a bulk thread action names: a list of ids, or every thread in a state. */
export type ThreadSelection = { threads: string[] } | { state: ThreadListState };
