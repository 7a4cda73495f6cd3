import { type Page, THREAD_LIST_STATES, type ThreadListState } from '@tributary/queue';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IngressError } from '../errors.js';
import { type ActionDescription, auditedAction, StoppedAction } from './audited-action.js';
import {
  BULK_MAX,
  DEAD_ACTIONS,
  type DeadAction,
  deadLetterAction,
  deadReplyAction,
  type Outcome,
  THREAD_ACTIONS,
  type ThreadAction,
  threadAction,
} from './item-actions.js';
import { type AdminStore, paged } from './list-routes.js';

/**
 * Runs `act` on each item in turn and tallies the outcomes. An item that fails stops the run: the items
 * after it are not tried, and what was done before is kept for the audit log (StoppedAction).
 */
async function each<T>(items: readonly T[], act: (item: T) => Promise<Outcome>) {
  const results: (T & Outcome)[] = [];
  const tally = () => {
    const done = results.filter((r) => r.outcome === 'done').length;
    return { done, absent: results.length - done };
  };
  for (const item of items) {
    try {
      results.push({ ...item, ...(await act(item)) });
    } catch (error) {
      const counts = { ...tally(), failed: 1, skipped: items.length - results.length - 1 };
      throw new StoppedAction(error, counts, results.length > 0);
    }
  }
  return { results, tally: tally() };
}

/** A bulk request names its items or a filter, and may ask only what it would match (`dryRun`). */
const bulkBody = (itemsSchema: object, filter: object) =>
  ({
    type: 'object',
    required: ['action'],
    properties: {
      action: { type: 'string' },
      items: { type: 'array', maxItems: BULK_MAX, items: itemsSchema },
      ...filter,
      /** With a filter: go on where the previous request's scan stopped (its `next`). */
      cursor: { type: 'string', minLength: 1, maxLength: 2048 },
      dryRun: { type: 'boolean', default: false },
    },
    additionalProperties: false,
  }) as const;

const threadItem = {
  type: 'object',
  required: ['thread'],
  properties: { thread: { type: 'string', minLength: 1, maxLength: 1024 } },
  additionalProperties: false,
} as const;

function itemKey(kind: 'batchId' | 'id') {
  return {
    type: 'object',
    required: ['thread', kind],
    properties: {
      thread: { type: 'string', minLength: 1, maxLength: 1024 },
      [kind]: { type: 'string', minLength: 1, maxLength: 1024 },
    },
    additionalProperties: false,
  } as const;
}

interface BulkBody<Item> {
  action: string;
  items?: Item[];
  cursor?: string;
  dryRun: boolean;
}

function checkAction<A extends string>(actions: readonly A[], action: string): A {
  if (!(actions as readonly string[]).includes(action)) {
    throw new IngressError('invalid_body', `action must be one of ${actions.join(', ')}`);
  }
  return action as A;
}

function selection<Item>(items: Item[] | undefined, filtered: boolean, cursor: string | undefined): void {
  if ((items === undefined) === !filtered) {
    throw new IngressError('invalid_body', 'name the items (`items`) or a filter, not both and not neither');
  }
  if (items !== undefined && cursor !== undefined) {
    throw new IngressError('invalid_body', '`cursor` goes on with a filter, not with `items`');
  }
}

/**
 * The admin API's actions, each on one item (404 when there is no such item) and in bulk (by a list of
 * ids or a filter, with per-item outcomes): every one idempotent by Idempotency-Key and audited.
 */
export async function actionRoutes(app: FastifyInstance, store: AdminStore): Promise<void> {
  const { audit } = store;

  app.post<{ Params: { thread: string; action: string } }>(
    '/admin/threads/:thread/:action',
    async (request, reply) => {
      const { thread } = request.params;
      const action = THREAD_ACTIONS.find((name) => name === request.params.action);
      if (!action) {
        throw new IngressError(
          'not_found',
          `no thread action ${request.params.action}; use ${THREAD_ACTIONS.join(', ')}`,
        );
      }
      return auditedAction(
        audit,
        request,
        reply,
        { action: `threads.${action}`, target: { thread } },
        async (delivery) => {
          const done = await threadAction(store, action, thread, delivery);
          if (done.outcome === 'absent')
            throw new IngressError('not_found', `no thread ${JSON.stringify(thread)}`);
          return { body: { ok: true, thread, action, result: done.detail } };
        },
      );
    },
  );

  app.post<{ Body: BulkBody<{ thread: string }> & { state?: ThreadListState } }>(
    '/admin/threads/actions',
    { schema: { body: bulkBody(threadItem, { state: { type: 'string', enum: THREAD_LIST_STATES } }) } },
    async (request, reply) => {
      const { items, state, cursor, dryRun } = request.body;
      const action = checkAction<ThreadAction>(THREAD_ACTIONS, request.body.action);
      selection(items, state !== undefined, cursor);
      const chosen = items
        ? { items, next: undefined }
        : await paged(() => store.listing.threads(state!, cursor, BULK_MAX)).then((page) => ({
            items: page.items.map(({ thread }) => ({ thread })),
            next: page.next,
          }));
      const target = items ? { threads: items.map((i) => i.thread) } : { state };
      return bulk(request, reply, { action: `threads.${action}`, target }, chosen, dryRun, (item, delivery) =>
        threadAction(store, action, item.thread, delivery),
      );
    },
  );

  for (const [kind, key, act] of [
    ['dead-letters', 'batchId', deadLetterAction],
    ['dead-replies', 'id', deadReplyAction],
  ] as const) {
    app.post<{ Params: { thread: string; id: string; action: string } }>(
      `/admin/threads/:thread/${kind}/:id/:action`,
      async (request, reply) => {
        const { thread, id } = request.params;
        const action = DEAD_ACTIONS.find((name) => name === request.params.action);
        if (!action)
          throw new IngressError(
            'not_found',
            `no ${kind} action ${request.params.action}; use ${DEAD_ACTIONS.join(', ')}`,
          );
        const target = { thread, [key]: id };
        return auditedAction(audit, request, reply, { action: `${kind}.${action}`, target }, async () => {
          const done = await act(store, action, thread, id);
          if (done.outcome === 'absent')
            throw new IngressError('not_found', `no ${kind.slice(0, -1)} ${id} in that thread`);
          return { body: { ok: true, thread, [key]: id, action, result: done.detail } };
        });
      },
    );

    app.post<{ Body: BulkBody<Record<string, string>> & { reason?: string; all?: boolean } }>(
      `/admin/${kind}/actions`,
      {
        schema: {
          body: bulkBody(itemKey(key), {
            reason: { type: 'string', minLength: 1, maxLength: 2048 },
            all: { type: 'boolean', const: true },
          }),
        },
      },
      async (request, reply) => {
        const { items, reason, all, cursor, dryRun } = request.body;
        const action = checkAction<DeadAction>(DEAD_ACTIONS, request.body.action);
        selection(items, reason !== undefined || all === true, cursor);
        const list = async () => {
          const page = await paged<Page<object>>(() =>
            kind === 'dead-letters'
              ? store.listing.deadLetters(cursor, BULK_MAX, reason)
              : store.listing.deadReplies(cursor, BULK_MAX, reason),
          );
          const rows = page.items as unknown as Record<string, string>[];
          return { items: rows.map((row) => ({ thread: row.thread!, [key]: row[key]! })), next: page.next };
        };
        const chosen = items ? { items, next: undefined } : await list();
        const target = items ?? (reason === undefined ? { all: true } : { reason });
        return bulk(request, reply, { action: `${kind}.${action}`, target }, chosen, dryRun, (item) =>
          act(store, action, item.thread!, item[key]!),
        );
      },
    );
  }

  app.post<{ Params: { owner: string } }>('/admin/workers/:owner/drain', async (request, reply) => {
    const { owner } = request.params;
    return auditedAction(audit, request, reply, { action: 'workers.drain', target: { owner } }, async () => {
      if (!(await store.workers.requestDrain(owner)))
        throw new IngressError('not_found', `no worker ${owner} reports`);
      return {
        status: 202,
        body: {
          ok: true,
          owner,
          result: 'drain requested: it stops taking doorbells and hands its threads back',
        },
      };
    });
  });

  /**
   * A bulk action: a dry run only says what it matches; otherwise each item's outcome, audited once
   * with the items it chose. `next`: more may match past what this request scanned (`truncated`).
   */
  async function bulk<Item extends object>(
    request: FastifyRequest,
    reply: FastifyReply,
    description: ActionDescription,
    chosen: { items: Item[]; next: string | undefined },
    dryRun: boolean,
    act: (item: Item, delivery: string | undefined) => Promise<Outcome>,
  ) {
    const head = {
      action: description.action,
      matched: chosen.items.length,
      truncated: chosen.next !== undefined,
      next: chosen.next ?? null,
    };
    if (dryRun) return reply.send({ ...head, dryRun: true, items: chosen.items });
    return auditedAction(audit, request, reply, { ...description, items: chosen.items }, async (delivery) => {
      const { results, tally } = await each(chosen.items, (item) => act(item, delivery));
      return { body: { ...head, dryRun: false, result: tally, items: results } };
    });
  }
}
