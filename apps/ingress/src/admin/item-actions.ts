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
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** Applies `action` to `thread`; an unknown thread is absent, and nothing is created for it. */
export async function threadAction(
  store: AdminStore,
  action: ThreadAction,
  thread: string,
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
      const { wasRunning } = await controls.cancel(thread);
      return { outcome: 'done', detail: wasRunning ? 'cancelling the running turn' : 'no turn was running' };
    }
    case 'cancel-all': {
      if (!(await admin.known(thread))) return absent;
      const { dropped } = await controls.cancelAll(thread);
      return { outcome: 'done', detail: `cancelled; dropped ${plural(dropped, 'waiting message')}` };
    }
    case 'reset': {
      const reset = await controls.reset(thread);
      if (!reset) return absent;
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

/** Items one bulk action may take: a filter that matches more is done in rounds (`truncated`). */
export const BULK_MAX = 1_000;

/** Every item a list's filter matches, up to BULK_MAX, page by page. */
export async function collect<T>(
  read: (cursor: string | undefined) => Promise<{ items: T[]; next: string | undefined }>,
): Promise<{ items: T[]; truncated: boolean }> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    items.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined && items.length < BULK_MAX);
  return { items: items.slice(0, BULK_MAX), truncated: cursor !== undefined || items.length > BULK_MAX };
}

/** The threads a bulk thread action names: a list of ids, or every thread in a state. */
export type ThreadSelection = { threads: string[] } | { state: ThreadListState };
