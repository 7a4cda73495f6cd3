import { randomUUID } from 'node:crypto';
import { SIGNATURE_HEADER, signBody } from '../hmac-signature.js';
import { classifyHttpAnswer } from '../http/answer.js';
import { type PlatformClientOptions, PlatformHttp } from '../http/platform-http.js';
import type { PlatformClient, PostTarget, SendOptions } from '../outbound.js';
import { gatewayReplyBody } from './reply-body.js';

export interface GatewayClientOptions extends Omit<PlatformClientOptions, 'baseUrl'> {
  /** GATEWAY_REPLY_URL: where replies are posted. */
  replyUrl: string;
  /** GATEWAY_SECRET: when set, each body is signed with it in `x-tributary-signature`. */
  secret?: string;
  /** The gateway relays to a platform of its own and splits there; this only bounds request size. */
  maxMessageLength?: number;
}

/**
 * Replies to an openab-compatible gateway (`openab.gateway.reply.v1`). Send only: a gateway has no
 * edits, reactions or thread history to fetch.
 */
export class GatewayClient implements PlatformClient {
  readonly platform = 'gateway';
  readonly maxMessageLength: number;
  private readonly http: PlatformHttp;

  constructor(private readonly options: GatewayClientOptions) {
    this.maxMessageLength = options.maxMessageLength ?? 65_536;
    this.http = new PlatformHttp({
      platform: this.platform,
      classify: classifyHttpAnswer,
      authHint: 'check that GATEWAY_SECRET matches the secret the gateway verifies with',
      secrets: options.secret === undefined ? [] : [options.secret],
      retry: options.retry,
      onCall: options.onCall,
    });
  }

  /**
   * Returns the reply id: the idempotency key when given. It goes out as `request_id` and in the
   * `idempotency-key` header, so a gateway that supports either can absorb a repeated post.
   */
  async send(target: PostTarget, text: string, options: SendOptions = {}): Promise<string> {
    const replyId = options.idempotencyKey ?? randomUUID();
    const body = JSON.stringify(gatewayReplyBody(target, text, replyId));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'idempotency-key': replyId,
    };
    if (this.options.secret) headers[SIGNATURE_HEADER] = signBody(this.options.secret, body);
    await this.http.call({ method: 'reply', url: this.options.replyUrl, headers, body });
    return replyId;
  }
}
