import rateLimit from '@fastify/rate-limit';
import type { RoutePlace } from '@tributary/config';
import {
  type Inbound,
  type InboundAdapter,
  InvalidWebhookError,
  type WebhookRequest,
} from '@tributary/platforms';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { alreadyApplied } from './control-commands.js';
import { sendError } from './error-handler.js';
import { IngressError } from './errors.js';
import type { IngressObserver } from './ingress-observer.js';
import type { Intake, IntakeOutcome } from './intake.js';
import type { WebhookDefinition } from './webhook-definitions.js';
import { type ConversationLimit, webhookLimits } from './webhook-limits.js';

export interface WebhookRouteOptions extends WebhookDefinition {
  intake: Intake;
  observer: IngressObserver;
  bodyLimitBytes: number;
  rateLimitPerMinute: number;
  /** A conversation's own budget, where its route sets one. */
  conversationLimit?: ConversationLimit;
}

function headersOf(request: FastifyRequest): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  // A header sent twice arrives as an array: no signature scheme allows that, so it counts as absent.
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

function parseInbound(adapter: InboundAdapter, webhook: WebhookRequest) {
  try {
    return adapter.parse(webhook);
  } catch (error) {
    if (error instanceof InvalidWebhookError) {
      throw new IngressError('invalid_body', error.message);
    }
    throw error;
  }
}

/**
 * Whose budget a verified delivery spends: the conversation (channel or chat) of a message or command.
 * Handshakes and ignored deliveries reach neither Redis nor the agent, so they spend none.
 */
/** Where a delivery's conversation is, as its rate limit and the route table see it. */
function conversationOf(inbound: Inbound): RoutePlace | undefined {
  const ref =
    inbound.kind === 'message' || inbound.kind === 'edit'
      ? inbound.message.ref
      : inbound.kind === 'control' || inbound.kind === 'delete'
        ? inbound.ref
        : undefined;
  return ref && { platform: ref.platform, workspaceId: ref.workspaceId, channelId: ref.channelId };
}

function answer(reply: FastifyReply, result: IntakeOutcome) {
  return reply.code(200).send({ ok: true, ...result });
}

/**
 * One platform's webhook in its own encapsulated context: a raw-body parser (signatures are over the
 * exact bytes), its own body limit and rate limits, verify → parse → rate limit → intake. Verification
 * comes first so that unverified traffic spends only its own budget (docs/adr/0013).
 */
export async function webhookRoute(app: FastifyInstance, options: WebhookRouteOptions): Promise<void> {
  const { adapter, platform, intake, observer } = options;
  app.removeAllContentTypeParsers();
  // Each route takes the one media type its platform posts (JSON, Slack's commands a form); any other
  // is refused with 415 before anything is read.
  app.addContentTypeParser(
    options.mediaType ?? 'application/json',
    { parseAs: 'buffer', bodyLimit: options.bodyLimitBytes },
    (_req, body, done) => done(null, body),
  );
  // No hook of its own: the limiters are called from the handler, after verification.
  await app.register(rateLimit, { global: false });
  const limits = webhookLimits(app, options.rateLimitPerMinute, options.conversationLimit);

  app.setErrorHandler((error, request, reply) => {
    const outcome = sendError(error, request, reply);
    observer.outcome(platform, outcome);
    if (outcome === 'refused')
      observer.refusal(
        platform,
        (error as IngressError).code === 'rate_limited' ? 'rate_limited' : 'backlog_full',
      );
  });
  // With a callback rather than async: Fastify then has no promise to make and await per response.
  app.addHook('onResponse', (_request, reply, done) => {
    observer.duration(platform, reply.elapsedTime / 1000);
    done();
  });

  app.post(options.path, async (request, reply) => {
    reply.header('x-tributary-platform', platform);
    if (!adapter) {
      throw new IngressError(
        'platform_not_configured',
        `${platform} is not configured on this ingress; set ${options.secretVariable}`,
      );
    }
    const webhook: WebhookRequest = {
      rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      headers: headersOf(request),
      now: Date.now(),
    };
    const verification = adapter.verify(webhook);
    if (!verification.ok) return limits.refuseUnverified(request, verification.reason);
    const inbound = parseInbound(adapter, webhook);
    const conversation = conversationOf(inbound);
    if (conversation !== undefined) await limits.admitVerified(request, conversation);
    switch (inbound.kind) {
      case 'handshake':
        observer.outcome(platform, 'handshake');
        return reply.code(200).send(inbound.body);
      case 'ignored':
        observer.outcome(platform, 'ignored');
        return answer(reply, { outcome: 'ignored', reason: inbound.reason });
      case 'control': {
        const result = await intake.platformCommand(inbound);
        observer.outcome(platform, result.outcome);
        // The platform expects its own answer to every delivery, a redelivery's too.
        const text = result.outcome === 'control' ? result.confirmation : alreadyApplied(inbound.command);
        return reply.code(200).send(inbound.respond(text));
      }
      case 'message':
      case 'edit': {
        const workspace = inbound.message.event.workspaceId;
        const self = (workspace === undefined ? undefined : options.selves?.get(workspace)) ?? options.self;
        const result =
          inbound.kind === 'edit'
            ? await intake.edit(adapter, self, inbound.message)
            : await intake.message(adapter, self, inbound.message);
        observer.outcome(platform, result.outcome);
        if (result.outcome === 'ignored' && result.refusal) observer.refusal(platform, result.refusal);
        return answer(reply, result);
      }
      case 'approval': {
        const click = await intake.approval(inbound);
        observer.outcome(platform, 'approval');
        observer.approvalClick(platform, click.result);
        return reply.code(200).send(inbound.respond(click.answer));
      }
      case 'delete': {
        const result = await intake.delete(inbound);
        observer.outcome(platform, result.outcome);
        return answer(reply, result);
      }
    }
  });
}
