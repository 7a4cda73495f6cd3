import {
  BadCursorError,
  isStreamId,
  type Store,
  THREAD_LIST_STATES,
  type ThreadListState,
} from '@tributary/queue';
import type { FastifyInstance } from 'fastify';
import { IngressError } from '../errors.js';
import {
  auditView,
  batchView,
  deadLetterRowView,
  deadReplyRowView,
  packedPrompt,
  poolsView,
  threadReportView,
  threadRowView,
  workerView,
} from './admin-views.js';

export type AdminStore = Pick<
  Store,
  'admin' | 'controls' | 'listing' | 'workers' | 'audit' | 'fleetStats' | 'usage'
>;

/** A page's query: `cursor` from the previous page's `next`, `limit` items at most. */
interface PageQuery {
  cursor?: string;
  limit: number;
}

const pageQuery = {
  cursor: { type: 'string', minLength: 1, maxLength: 2048 },
  limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
} as const;

/** A list's cursor that none of its pages handed out is the client's mistake, not ours. */
export async function paged<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof BadCursorError)
      throw new IngressError('invalid_body', 'cursor is not one this list gave');
    throw error;
  }
}

/** Reason classes the overview names, the most frequent first; a list names at most its page's limit. */
const OVERVIEW_REASONS = 20;

function unknownThread(thread: string): IngressError {
  return new IngressError('not_found', `no thread ${JSON.stringify(thread)}: Redis holds nothing of it`);
}

/** The admin API's reads: the fleet's lists, a thread's report and timeline, a message by id, the audit log. */
export async function listRoutes(app: FastifyInstance, store: AdminStore): Promise<void> {
  const { admin, listing } = store;

  app.get('/admin/whoami', async (request) => request.operator);

  app.get('/admin/overview', async () => {
    const [summary, fleet, workers] = await Promise.all([
      listing.summary(),
      store.fleetStats(),
      store.workers.list(),
    ]);
    return {
      at: new Date().toISOString(),
      threads: {
        running: summary.running,
        runnable: summary.runnable,
        scheduled: summary.scheduled,
        paused: summary.paused,
        active: summary.active,
      },
      backlog: fleet.backlog,
      pools: poolsView(fleet.pools),
      workers: {
        total: workers.length,
        taking: workers.filter((w) => w.state === 'taking').length,
        sessions: workers.reduce((sum, w) => sum + w.sessions.length, 0),
      },
      deadLetters: {
        total: summary.deadLetters,
        byReason: summary.deadLetterReasons.slice(0, OVERVIEW_REASONS),
        evicted: fleet.dead.letters.evicted,
      },
      deadReplies: {
        total: summary.deadReplies,
        byReason: summary.deadReplyReasons.slice(0, OVERVIEW_REASONS),
        evicted: fleet.dead.replies.evicted,
      },
    };
  });

  app.get<{ Querystring: PageQuery & { state: ThreadListState } }>(
    '/admin/threads',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { ...pageQuery, state: { type: 'string', enum: THREAD_LIST_STATES, default: 'all' } },
          additionalProperties: false,
        },
      },
    },
    async (request) => {
      const { state, cursor, limit } = request.query;
      const page = await paged(() => listing.threads(state, cursor, limit));
      return { state, items: page.items.map(threadRowView), next: page.next ?? null };
    },
  );

  app.get<{ Params: { thread: string } }>('/admin/threads/:thread', async (request) => {
    const report = await admin.report(request.params.thread);
    if (!report) throw unknownThread(request.params.thread);
    return threadReportView(report);
  });

  // A batch of the thread's history (or a dead letter) with the prompt its messages packed into.
  app.get<{ Params: { thread: string; batchId: string } }>(
    '/admin/threads/:thread/batches/:batchId',
    async (request) => {
      const { thread, batchId } = request.params;
      const report = await admin.report(thread);
      if (!report) throw unknownThread(thread);
      const records = report.history.filter((record) => record.batchId === batchId);
      const dead = report.deadLetters.find((letter) => letter.batchId === batchId);
      const messages = records[0]?.messages ?? dead?.messages;
      if (!messages) throw new IngressError('not_found', `no batch ${batchId} in that thread's history`);
      return {
        thread,
        batchId,
        deliveries: records.map(batchView),
        deadLetter: dead !== undefined,
        prompt: packedPrompt(messages) ?? null,
      };
    },
  );

  // Where a platform message went: refused, queued, in a batch (and how its turn ended), edited, deleted.
  app.get<{ Params: { thread: string; messageId: string } }>(
    '/admin/threads/:thread/messages/:messageId',
    async (request) => {
      const { thread, messageId } = request.params;
      const receipt = await admin.receipt(thread, messageId);
      if (!receipt) throw new IngressError('not_found', `no receipt of message ${messageId} in that thread`);
      return receipt;
    },
  );

  // The same without the thread: every thread that took a message by that platform id.
  app.get<{ Params: { messageId: string } }>('/admin/messages/:messageId', async (request) => {
    const { messageId } = request.params;
    const items = await listing.findMessage(messageId);
    if (items.length === 0)
      throw new IngressError('not_found', `no receipt of message ${messageId} in any thread`);
    return { messageId, items };
  });

  const deadQuery = {
    type: 'object',
    properties: { ...pageQuery, reason: { type: 'string', minLength: 1, maxLength: 2048 } },
    additionalProperties: false,
  } as const;

  app.get<{ Querystring: PageQuery & { reason?: string } }>(
    '/admin/dead-letters',
    { schema: { querystring: deadQuery } },
    async (request) => {
      const { cursor, limit, reason } = request.query;
      const [page, summary] = await Promise.all([
        paged(() => listing.deadLetters(cursor, limit, reason)),
        listing.summary(),
      ]);
      return {
        items: page.items.map(deadLetterRowView),
        next: page.next ?? null,
        total: summary.deadLetters,
        groups: summary.deadLetterReasons.slice(0, limit),
      };
    },
  );

  app.get<{ Querystring: PageQuery & { reason?: string } }>(
    '/admin/dead-replies',
    { schema: { querystring: deadQuery } },
    async (request) => {
      const { cursor, limit, reason } = request.query;
      const [page, summary] = await Promise.all([
        paged(() => listing.deadReplies(cursor, limit, reason)),
        listing.summary(),
      ]);
      return {
        items: page.items.map(deadReplyRowView),
        next: page.next ?? null,
        total: summary.deadReplies,
        groups: summary.deadReplyReasons.slice(0, limit),
      };
    },
  );

  app.get('/admin/workers', async () => ({ items: (await store.workers.list()).map(workerView) }));

  app.get('/admin/pools', async () => ({ items: poolsView((await store.fleetStats()).pools) }));

  app.get<{ Querystring: PageQuery }>(
    '/admin/audit',
    { schema: { querystring: { type: 'object', properties: pageQuery, additionalProperties: false } } },
    async (request) => {
      const { cursor, limit } = request.query;
      if (cursor !== undefined && !isStreamId(cursor)) {
        throw new IngressError('invalid_body', 'cursor is not one this list gave');
      }
      const page = await store.audit.list(cursor, limit);
      return { items: page.items.map(auditView), next: page.next ?? null };
    },
  );
}
