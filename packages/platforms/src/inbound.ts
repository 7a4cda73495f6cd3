import type { ArrivalEvent } from '@tributary/packing';
import type { MessageRef } from './message-ref.js';
import type { ThreadParent } from './outbound.js';

/** The request as ingress saw it: the raw bytes (signatures are over them) and lower-cased headers. */
export interface WebhookRequest {
  rawBody: Buffer;
  headers: Readonly<Record<string, string | undefined>>;
  /** Wall-clock ms, passed in so replay windows are table-testable. */
  now: number;
}

import type { ThreadCommand } from './thread-commands.js';

/** One chat message, parsed, before the gates. Its text is verbatim: mentions are not stripped yet. */
export interface InboundMessage {
  event: ArrivalEvent;
  /**
   * The queue's thread key, `<adapter platform>:…` (usually `<channel>:<thread root>`; each adapter
   * documents its rule); one agent session per key.
   */
  thread: string;
  /** Platform identity of the message: every delivery of the same message carries the same one. */
  idempotencyKey: string;
  /** Platform user ids the message mentions (our own id among them when we are mentioned). */
  mentions: string[];
  /** Where to react and reply. */
  ref: MessageRef;
  /**
   * The conversation is with us alone (a direct message, or a gateway that relays only what is meant
   * for us): nobody else could be addressed, so no mention is needed.
   */
  direct: boolean;
  /** The message this one answers, when the platform delivers it inline (Telegram's `reply_to_message`). */
  parent?: ThreadParent;
}

/** What a verified webhook delivery asks of ingress. */
export type Inbound =
  | { kind: 'message'; message: InboundMessage }
  /**
   * A command the platform delivered as such (Discord's and Slack's slash commands); text commands come
   * as messages.
   */
  | {
      kind: 'control';
      command: ThreadCommand;
      /**
       * The thread it acts on; undefined when the platform gives none (Slack's slash commands cannot be
       * used in a thread): then the invoker's latest thread in the channel of `ref`.
       */
      thread?: string;
      ref: MessageRef;
      /** Who invoked it, for the allow lists. */
      senderId: string;
      /** Identity of the invocation: a redelivery of it carries the same one, and is not applied again. */
      idempotencyKey: string;
      respond: ControlResponder;
    }
  /**
   * The platform's edit of a message: `message` as it now reads, with the original's `eventId`,
   * `timestamp` and thread, `event.editedAt` set, and `idempotencyKey` the identity of this edit (a
   * redelivery of the same edit carries the same one).
   */
  | { kind: 'edit'; message: InboundMessage }
  /** The platform's delete of message `messageId`; `idempotencyKey` is the identity of this delete. */
  | { kind: 'delete'; thread: string; messageId: string; idempotencyKey: string; ref: MessageRef }
  /**
   * A click on a button of a permission request: `option` is the button's place among the request's
   * options. `respond` makes the HTTP answer; `privately` says whether it reaches the clicker alone
   * (else ingress whispers a refusal through the client, where the platform can).
   */
  | {
      kind: 'approval';
      approvalId: string;
      option: number;
      userId: string;
      /** How the clicker is named, where the platform says. */
      userName?: string;
      /** The clicker's roles where the click carries them (Discord's `member.roles`). */
      userRoles?: string[];
      /** Where the request's message is. */
      ref: MessageRef;
      idempotencyKey: string;
      respond: (answer: string | undefined) => unknown;
      privately: boolean;
    }
  /** A handshake answered directly: Slack `url_verification`, Discord PING. */
  | { kind: 'handshake'; body: unknown }
  /** Verified and well-formed but nothing to do (joins, our own echoes, unsupported kinds). */
  | { kind: 'ignored'; reason: string };

/**
 * How ingress answers a platform-delivered command: Discord expects the confirmation in the HTTP
 * response of the interaction; the others get it as a normal reply.
 */
export type ControlResponder = (confirmation: string) => unknown;

export type Verification = { ok: true } | { ok: false; reason: string };

/** Bad input: ingress answers 400 with `{ error: message }` and enqueues nothing. */
export class InvalidWebhookError extends Error {
  override readonly name = 'InvalidWebhookError';
}

/** The inbound half of a platform: pure functions of the request, so every branch is table-tested. */
export interface InboundAdapter {
  readonly platform: string;
  /** Signature, timestamp window, secret token. Never throws. */
  verify(request: WebhookRequest): Verification;
  /** Called only after `verify` said ok. Throws InvalidWebhookError on malformed bodies. */
  parse(request: WebhookRequest): Inbound;
  /**
   * The text as the agent should read it: mentions of `selfId` that lead or end it (the platform's way
   * of addressing us) removed, others turned into `@<selfName>` (kept as written without a name); the
   * rest verbatim.
   */
  stripSelfMention(text: string, selfId: string, selfName?: string): string;
}
