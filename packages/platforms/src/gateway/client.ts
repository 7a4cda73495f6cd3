import { randomUUID } from 'node:crypto';
import { type ApprovalPrompt, approvalButton } from '../approval-buttons.js';
import { FileFetchError } from '../files/file-fetch-error.js';
import {
  type DownloadLimits,
  type FetchedFile,
  guardedDownload,
  operatorChosen,
} from '../files/guarded-download.js';
import { signedRequestHeaders } from '../hmac-signature.js';
import { classifyHttpAnswer } from '../http/answer.js';
import { type PlatformClientOptions, PlatformHttp } from '../http/platform-http.js';
import type { MessageRef } from '../message-ref.js';
import type { PlatformClient, Reaction, SendOptions } from '../outbound.js';
import { UNICODE_REACTIONS } from '../unicode-reactions.js';
import {
  type GatewayCommand,
  gatewayApprovalBody,
  gatewayCommandBody,
  gatewayReplyBody,
} from './reply-body.js';

export interface GatewayClientOptions extends Omit<PlatformClientOptions, 'baseUrl'> {
  /** GATEWAY_REPLY_URL: where replies are posted. */
  replyUrl: string;
  /**
   * GATEWAY_SECRET: when set, each post is signed with it as ingress wants events signed: the
   * `x-tributary-timestamp` of the attempt and `x-tributary-signature` over it and the body.
   */
  secret?: string;
  /** GATEWAY_FILES_URL: the one origin attachment URLs are downloaded from; unset, none are. */
  filesUrl?: string;
  /** The gateway relays to a platform of its own and splits there; this only bounds request size. */
  maxMessageLength?: number;
}

/**
 * Replies to an openab-compatible gateway (`openab.gateway.reply.v1`): posts, and reactions as the
 * protocol's `add_reaction`/`remove_reaction` commands, so 👀, progress and stall signs reach the
 * platform behind the gateway too. A gateway has no edits or thread history to fetch.
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

  /** The gateway's platform renders the Markdown, as openab's own replies are Markdown. */
  render(markdown: string): string {
    return markdown;
  }

  /**
   * Returns the reply id: the idempotency key when given. It goes out as `request_id` and in the
   * `idempotency-key` header, so a gateway that supports either can absorb a repeated post.
   */
  async send(target: MessageRef, text: string, options: SendOptions = {}): Promise<string> {
    const replyId = options.idempotencyKey ?? randomUUID();
    await this.post('reply', gatewayReplyBody(target, text, replyId), replyId);
    return replyId;
  }

  /** `ask_approval`: the request's id is its `request_id`, which a settle names in `reply_to`. */
  async askApproval(target: MessageRef, prompt: ApprovalPrompt): Promise<string> {
    const requestId = `approval-${prompt.id}`;
    const options = prompt.options.map((option, index) => ({
      data: approvalButton(prompt.id, index),
      name: option.name,
      kind: option.kind,
    }));
    await this.post(
      'ask_approval',
      gatewayApprovalBody(target, 'ask_approval', prompt.text, requestId, options),
      requestId,
    );
    return requestId;
  }

  async settleApproval(target: MessageRef, messageId: string, markdown: string): Promise<void> {
    await this.post(
      'settle_approval',
      gatewayApprovalBody(target, 'settle_approval', markdown, messageId),
      randomUUID(),
    );
  }

  async fetchFile(ref: string, limits: DownloadLimits): Promise<FetchedFile> {
    if (this.options.filesUrl === undefined) {
      throw new FileFetchError('refused', 'GATEWAY_FILES_URL is not set, so gateway files are not fetched');
    }
    if (!URL.canParse(ref)) throw new FileFetchError('refused', 'the attachment has no URL');
    return guardedDownload({
      url: new URL(ref),
      allowedOrigins: [this.options.filesUrl],
      configuredOrigins: operatorChosen(this.options.filesUrl, []),
      ...limits,
    });
  }

  async react(message: MessageRef, reaction: Reaction): Promise<void> {
    await this.command('add_reaction', message, reaction);
  }

  async unreact(message: MessageRef, reaction: Reaction): Promise<void> {
    await this.command('remove_reaction', message, reaction);
  }

  private async command(command: GatewayCommand, message: MessageRef, reaction: Reaction): Promise<void> {
    const requestId = randomUUID();
    await this.post(
      command,
      gatewayCommandBody(message, command, UNICODE_REACTIONS[reaction], requestId),
      requestId,
    );
  }

  private async post(method: string, payload: object, requestId: string): Promise<void> {
    const body = JSON.stringify(payload);
    const { secret } = this.options;
    await this.http.call({
      method,
      url: this.options.replyUrl,
      headers: { 'content-type': 'application/json', 'idempotency-key': requestId },
      ...(secret ? { signedHeaders: () => signedRequestHeaders(secret, body) } : {}),
      body,
    });
  }
}
