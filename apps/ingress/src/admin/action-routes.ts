import { THREAD_LIST_STATES, type ThreadListState } from '@tributary/queue';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IngressError } from '../errors.js';
import { type ActionDescription, auditedAction } from './audited-action.js';
import {
  BULK_MAX,
  collect,
  DEAD_ACTIONS,
  type DeadAction,
  deadLetterAction,
  deadReplyAction,
  type Outcome,
  THREAD_ACTIONS,
  type ThreadAction,
  threadAction,
} from './item-actions.js';
import type { AdminStore } from './list-routes.js';

/** Runs `act` on each item in turn and tallies the outcomes. */
async function each<T>(items: readonly T[], act: (item: T) => Promise<Outcome>) {
  const results: (T & Outcome)[] = [];
  for (const item of items) results.push({ ...item, ...(await act(item)) });
  const done = results.filter((r) => r.outcome === 'done').length;
  return { results, tally: { done, absent: results.length - done } };
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
  dryRun: boolean;
}

function checkAction<A extends string>(actions: readonly A[], action: string): A {
  if (!(actions as readonly string[]).includes(action)) {
    throw new IngressError('invalid_body', `action must be one of ${actions.join(', ')}`);
  }
  return action as A;
}

function selection<Item>(items: Item[] | undefined, filtered: boolean): void {
  if ((items === undefined) === !filtered) {
    throw new IngressError('invalid_body', 'name the items (`items`) or a filter, not both and not neither');
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
        async () => {
          const done = await threadAction(store, action, thread);
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
      const { items, state, dryRun } = request.body;
      const action = checkAction<ThreadAction>(THREAD_ACTIONS, request.body.action);
      selection(items, state !== undefined);
      const chosen = items
        ? { items, truncated: false }
        : await collect(async (cursor) => {
            const page = await store.listing.threads(state!, cursor, 500);
            return { items: page.items.map(({ thread }) => ({ thread })), next: page.next };
          });
      const target = items ? { threads: items.map((i) => i.thread) } : { state };
      return bulk(request, reply, { action: `threads.${action}`, target }, chosen, dryRun, (item) =>
        threadAction(store, action, item.thread),
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
        const { items, reason, all, dryRun } = request.body;
        const action = checkAction<DeadAction>(DEAD_ACTIONS, request.body.action);
        selection(items, reason !== undefined || all === true);
        const list = async (cursor: string | undefined) => {
          const page =
            kind === 'dead-letters'
              ? await store.listing.deadLetters(cursor, 500, reason)
              : await store.listing.deadReplies(cursor, 500, reason);
          return { items: page.items as unknown as Record<string, string>[], next: page.next };
        };
        const chosen = items
          ? { items, truncated: false }
          : await collect(async (cursor) => {
              const page = await list(cursor);
              return {
                items: page.items.map((row) => ({ thread: row.thread!, [key]: row[key]! })),
                next: page.next,
              };
            });
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

  /** A bulk action: a dry run only says what it matches; otherwise each item's outcome, audited once. */
  async function bulk<Item extends object>(
    request: FastifyRequest,
    reply: FastifyReply,
    description: ActionDescription,
    chosen: { items: Item[]; truncated: boolean },
    dryRun: boolean,
    act: (item: Item) => Promise<Outcome>,
  ) {
    const head = { action: description.action, matched: chosen.items.length, truncated: chosen.truncated };
    if (dryRun) return reply.send({ ...head, dryRun: true, items: chosen.items });
    return auditedAction(audit, request, reply, description, async () => {
      const { results, tally } = await each(chosen.items, act);
      return { body: { ...head, dryRun: false, result: tally, items: results } };
    });
  }
}
