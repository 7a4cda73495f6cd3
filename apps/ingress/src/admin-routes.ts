import rateLimit from '@fastify/rate-limit';
import type { ControlCommand } from '@tributary/platforms';
import type { ThreadAdmin, ThreadControls } from '@tributary/queue';
import type { FastifyInstance } from 'fastify';
import { bearerGuard } from './bearer-guard.js';
import { applyControl } from './control-commands.js';
import { IngressError } from './errors.js';

export interface AdminRouteOptions {
  token: string;
  admin: ThreadAdmin;
  controls: ThreadControls;
}

const COMMANDS: readonly ControlCommand[] = ['cancel', 'cancel-all', 'reset'];

/** Requests with a wrong token a client address may send a minute before the admin API answers 429. */
export const ADMIN_FAILED_AUTH_PER_MINUTE = 20;

/**
 * Operator API under `/admin`, bearer `ADMIN_TOKEN`; registered only when the token is set. Thread ids
 * travel URL-encoded in the path. A client address that sends more than ADMIN_FAILED_AUTH_PER_MINUTE
 * wrong tokens a minute gets 429 until the minute is over.
 */
export async function adminRoutes(app: FastifyInstance, options: AdminRouteOptions): Promise<void> {
  const { admin, controls, token } = options;
  await app.register(rateLimit, { global: false });
  // Keyed by the client address (request.ip, which TRUST_PROXY makes the real one).
  const failures = app.createRateLimit({ max: ADMIN_FAILED_AUTH_PER_MINUTE, timeWindow: 60_000 });
  app.addHook('onRequest', bearerGuard(token, 'ADMIN_TOKEN', failures));

  app.get('/admin/dead-letters', async () => ({ threads: await admin.threadsWithDeadLetters() }));

  app.get<{ Params: { thread: string } }>('/admin/threads/:thread', async (request) =>
    admin.report(request.params.thread),
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

  app.post<{ Params: { thread: string; command: string } }>(
    '/admin/threads/:thread/:command',
    async (request) => {
      const { thread, command } = request.params;
      if (!(COMMANDS as readonly string[]).includes(command)) {
        throw new IngressError('not_found', `no admin command ${command}; use ${COMMANDS.join(', ')}`);
      }
      const result = await applyControl(controls, command as ControlCommand, thread);
      return { ok: true, thread, command, result };
    },
  );

  app.get('/admin/dead-replies', async () => ({ threads: await admin.threadsWithDeadReplies() }));

  app.post<{ Params: { thread: string; replyId: string } }>(
    '/admin/threads/:thread/dead-replies/:replyId/redrive',
    async (request) => {
      const { thread, replyId } = request.params;
      if (!(await admin.redriveReply(thread, replyId))) {
        throw new IngressError('not_found', `no dead reply ${replyId} in that thread`);
      }
      return { ok: true, thread, replyId };
    },
  );

  app.post<{ Params: { thread: string; batchId: string } }>(
    '/admin/threads/:thread/dead-letters/:batchId/redrive',
    async (request) => {
      const { thread, batchId } = request.params;
      const requeued = await admin.redrive(thread, batchId);
      if (requeued === 0) throw new IngressError('not_found', `no dead letter ${batchId} in that thread`);
      return { ok: true, thread, batchId, requeued };
    },
  );
}
