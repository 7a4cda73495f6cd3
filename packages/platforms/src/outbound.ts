import type { ArrivalEvent, ThreadParentMessage } from '@tributary/packing';
import type { ApprovalPrompt } from './approval-buttons.js';
import type { DownloadLimits, FetchedFile } from './files/guarded-download.js';
import type { MessageRef, StreamRecipient } from './message-ref.js';

/**
 * What a reaction says, not which emoji: each platform maps it to one it supports.
 * `accepted`: the message is queued (👀). `working`: on the trailing message of the running batch.
 * `stall-soft` / `stall-hard`: the turn has been silent for a while / long enough to think of /cancel.
 * `done`: the turn answered. `failed`: the turn failed (⚠️ where the platform has it).
 */
/** `tool`: the agent is running a tool (or has just shown its plan). */
export type Reaction = 'accepted' | 'working' | 'tool' | 'stall-soft' | 'stall-hard' | 'done' | 'failed';

/** One limit a platform publishes: at most `perMinute` writes to one place, `burst` of them at once. */
export interface PaceLimit {
  /** The place: `slack:channel:C123`, `telegram:bot:<digest of the token>`. */
  key: string;
  perMinute: number;
  burst: number;
}

/**
 * Paces a write by the platform's limits across the fleet: waits for a slot of each and answers
 * undefined; for a draft that finds no free slot, answers at once how long until the next.
 */
export type Pace = (
  platform: string,
  limits: readonly PaceLimit[],
  draft: boolean,
) => Promise<number | undefined>;

/** How a write may be spent. */
export interface WriteOptions {
  /**
   * A draft the next write replaces (a streamed reply): one attempt, no retry, and a rate limit is
   * thrown at once with its wait (`PlatformApiError.retryAfterMs`) instead of being slept through.
   */
  draft?: boolean;
}

/**
 * A reply the platform streams itself (Slack's `chat.startStream`): text is appended, never rewritten,
 * until it is stopped; after that it is an ordinary message that `edit` replaces.
 */
export interface NativeStreaming {
  /**
   * Starts a message showing `markdown` and returns its id, or undefined where the platform will not
   * stream here (a workspace without the feature, a recipient it cannot name); the caller edits then.
   */
  start(target: MessageRef, recipient: StreamRecipient, markdown: string): Promise<string | undefined>;
  append(target: MessageRef, messageId: string, markdown: string): Promise<void>;
  stop(target: MessageRef, messageId: string): Promise<void>;
}

/** What a caller knows about a post beyond its text; each platform uses what it can. */
export interface SendOptions extends WriteOptions {
  /** Stable per logical post (e.g. `<batchId>:<kind>`), so a receiver that supports it absorbs repeats. */
  idempotencyKey?: string;
}

/** The message a thread started from, for a fresh session's context (the packing layer renders it). */
export type ThreadParent = ThreadParentMessage;

/**
 * The outbound half of a platform. Each call honours the platform's rate limits (Retry-After) and
 * retries 5xx with backoff; a call that still fails throws PlatformApiError. Optional capabilities are
 * absent when the platform lacks them.
 */
export interface PlatformClient {
  readonly platform: string;
  /**
   * Length limit per message in UTF-16 code units of the rendered text; longer Markdown is split by
   * `splitFormatted` with `render` before sending.
   */
  readonly maxMessageLength: number;
  /**
   * Markdown in the platform's own syntax, escaped so that the text cannot mention or link more than
   * it says: what `send` and `edit` post for the Markdown they are given.
   */
  render(markdown: string): string;
  /** Posts one message of Markdown (rendered, at most maxMessageLength) and returns its platform id. */
  send(target: MessageRef, markdown: string, options?: SendOptions): Promise<string>;
  edit?(target: MessageRef, messageId: string, markdown: string, options?: WriteOptions): Promise<void>;
  /**
   * The shortest time between two edits of one message in `target`'s conversation that keeps within
   * the platform's published rate limits; present with `edit`.
   */
  editIntervalMs?(target: MessageRef): number;
  /** Streams a reply natively where the platform can; every write is a draft (one attempt). */
  readonly streaming?: NativeStreaming;
  /**
   * Shows that the bot is writing in `target`'s conversation (a draft: one attempt); it fades by itself
   * after `typingRefreshMs`, so a caller repeats it while it works.
   */
  typing?(target: MessageRef): Promise<void>;
  readonly typingRefreshMs?: number;
  react?(message: MessageRef, reaction: Reaction): Promise<void>;
  unreact?(message: MessageRef, reaction: Reaction): Promise<void>;
  /** The thread's first message, or undefined when the event starts the thread itself. */
  fetchThreadParent?(event: ArrivalEvent): Promise<ThreadParent | undefined>;
  /**
   * Downloads an attachment's file (`AttachmentSource.ref`) from the platform's own file host, with its
   * credentials (those of `workspaceId`, the message's workspace, where it has its own); throws
   * FileFetchError (or PlatformApiError for a lookup the platform refused).
   */
  fetchFile?(ref: string, limits: DownloadLimits, workspaceId?: string): Promise<FetchedFile>;
  /**
   * Posts a permission request with a button per option (docs/adr/0056) and returns the message id; a
   * click comes back to ingress as an `approval`.
   */
  askApproval?(target: MessageRef, prompt: ApprovalPrompt): Promise<string>;
  /** Replaces a request's buttons with `markdown`: who answered what, or how it ended. */
  settleApproval?(target: MessageRef, messageId: string, markdown: string): Promise<void>;
  /**
   * Which of `groups` `userId` belongs to, as the platform keeps groups: Slack's user groups (`S…`,
   * scope usergroups:read), Telegram's `admins` of `target`'s chat. For APPROVERS entries
   * `<platform>:group:<group>`, looked up at each click so that a change on the platform counts at once.
   */
  memberOf?(target: MessageRef, userId: string, groups: readonly string[]): Promise<string[]>;
  /** Tells one person something only they see, where the platform has such messages (Slack). */
  whisper?(target: MessageRef, userId: string, markdown: string): Promise<void>;
  /**
   * Who the bot token belongs to (Slack auth.test, Telegram getMe, Discord /users/@me); with a
   * `workspaceId`, the token of that workspace.
   */
  whoAmI?(workspaceId?: string): Promise<BotIdentity>;
  /** A user's names, for events that name their sender by id alone (Slack users.info), in their workspace. */
  userNames?(userId: string, workspaceId?: string): Promise<UserNames>;
}

/** A command as a platform's command list shows it. */
export interface ListedCommand {
  name: string;
  description: string;
}

/** Our own account on a platform. */
export interface BotIdentity {
  /** What the platform's mentions of us name: a user id, or (Telegram) the username. */
  id: string;
  /** How people write us: a mention in mid-sentence becomes `@<name>`. */
  name: string;
  /** The workspace the token belongs to, where the platform says (Slack's team id). */
  workspaceId?: string;
}

export interface UserNames {
  name: string;
  displayName: string;
}

export class PlatformApiError extends Error {
  override readonly name = 'PlatformApiError';

  constructor(
    readonly platform: string,
    readonly method: string,
    /** HTTP status, or 0 when the request never got an answer. */
    readonly status: number,
    message: string,
    /** The platform's own error identifier (Slack `error`, Discord `code`, Telegram `description`). */
    readonly code?: string,
    /** The wait the platform asked for (rate limited beyond the call's retry budget). */
    readonly retryAfterMs?: number,
  ) {
    super(`${platform} ${method} failed (${status || 'no answer'}): ${message}`);
  }
}
