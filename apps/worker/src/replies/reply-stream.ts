import type { SecretScrubber } from '@tributary/observability';
import {
  type MessageRef,
  type NativeStreaming,
  PlatformApiError,
  type PlatformClient,
  type StreamRecipient,
  splitFormatted,
} from '@tributary/platforms';
import type { PostedParts } from '@tributary/queue';
import type { Logger } from 'pino';
import { replyId } from './outbox.js';

/** Where a stream's messages are recorded: the batch's reply, part by part. */
export interface StreamSlot {
  thread: string;
  batchId: string;
}

export interface StreamPace {
  /** REPLY_STREAM_INTERVAL_MS; the platform's own edit interval when that is longer. */
  intervalMs: number;
  /** REPLY_MAX_PARTS: the stream posts no more messages than the final reply may have. */
  maxParts: number;
}

/** A reply stream for a batch's turn, where its thread's platform can show one; undefined where not. */
export type StreamFactory = (
  thread: string,
  batchId: string,
  target: MessageRef,
  recipient: StreamRecipient,
) => ReplyStream | undefined;

/** A client the stream can write with. */
export type EditingClient = PlatformClient & Required<Pick<PlatformClient, 'edit'>>;

export function canStream(client: PlatformClient | undefined): client is EditingClient {
  return client?.edit !== undefined;
}

const MORE = ' …';

/**
 * Streams a turn's reply into messages on a platform that lets us edit: the first posted one interval
 * after the first chunk, then edited at most once per interval (never more often than the platform's
 * published limits allow), and a reply that outgrows a message goes on in the next one. Each message
 * is recorded as a part of the batch's reply, so the final delivery edits them into the finished
 * parts instead of posting again.
 *
 * Where the platform streams natively (`PlatformClient.streaming`, Slack) and knows whom for, each part
 * is a native stream instead: started with the text so far, appended to, stopped when the next part
 * begins or the turn ends. It shows no status line and no marker, which an append could not take back.
 * A workspace that will not stream, or a first start that fails, turns this reply to edits.
 *
 * Every write is a draft (`WriteOptions.draft`): one attempt, never a wait. A rate-limited write is
 * skipped and the next one waits as the platform asked, so a rate limit never holds up the end of the
 * turn or its final reply. Best effort: a failed write is logged and the final delivery still happens.
 * Each write shows the text so far scrubbed of the worker's secrets as a whole, never chunk by chunk,
 * so a secret split across chunks is recognised; its start is held back until the rest arrives.
 */
export class ReplyStream {
  private text = '';
  /** What the agent is doing (a tool it runs, its plan), shown under the text until the reply is final. */
  private activity: string | undefined;
  /** The platform ids of the messages posted so far, by part. */
  private readonly messageIds: string[] = [];
  /** What each message shows now, so that a part that did not change is not written again. */
  private readonly shown: string[] = [];
  /** When the stream last wrote, or (before the first message exists) when the first chunk came. */
  private lastWrite = 0;
  /** No write before this: the wait a rate limit asked for. */
  private notBefore = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private finished = false;
  private readonly intervalMs: number;
  /** The platform's own streaming while this reply uses it; undefined once it falls back to edits. */
  private native: NativeStreaming | undefined;
  /** The parts whose native stream is still open. */
  private readonly open = new Set<number>();

  constructor(
    private readonly client: EditingClient,
    private readonly target: MessageRef,
    private readonly posted: Pick<PostedParts, 'posted'>,
    private readonly slot: StreamSlot,
    private readonly pace: StreamPace,
    private readonly logger: Logger,
    private readonly secrets: Pick<SecretScrubber, 'scrubStreamed'>,
    private readonly recipient?: StreamRecipient,
  ) {
    this.intervalMs = Math.max(pace.intervalMs, client.editIntervalMs?.(target) ?? 0);
    this.native = recipient === undefined ? undefined : client.streaming;
  }

  chunk(text: string): void {
    if (this.finished || text === '') return;
    if (!this.started) this.lastWrite = Date.now();
    this.text += text;
    this.schedule();
  }

  /** Sets the status line under the streamed text; it is never part of the final reply. */
  status(line: string): void {
    if (this.finished || line === this.activity) return;
    if (!this.started) this.lastWrite = Date.now();
    this.activity = line;
    this.schedule();
  }

  private get started(): boolean {
    return this.text !== '' || this.activity !== undefined;
  }

  private schedule(): void {
    if (this.timer) return;
    // A reply that is complete within one interval is posted once, from the outbox: no placeholder.
    const wait = Math.max(0, Math.max(this.lastWrite + this.intervalMs, this.notBefore) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.writing.then(() => this.write());
    }, wait);
  }

  /**
   * Stops streaming, waits for a write in flight and stops the native streams still open, so that the
   * final delivery can edit them; the final text is the outbox's to deliver.
   */
  async finish(): Promise<void> {
    this.finished = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    await this.closeStreams();
  }

  private async write(): Promise<void> {
    this.lastWrite = Date.now();
    try {
      // A platform that will not stream here has this reply edited, from this very write on.
      if (this.native && (await this.streamParts(this.native))) return;
      await this.editParts();
    } catch (error) {
      // A first stream that failed other than by a rate limit: this reply is edited instead.
      if (this.native && this.messageIds.length === 0 && !isRateLimit(error)) await this.toEdits();
      this.failed(error);
    }
  }

  private async editParts(): Promise<void> {
    const parts = this.parts();
    const last = parts.length - 1;
    for (const [index, part] of parts.entries()) {
      if (this.finished) return;
      const visible = index === last ? `${part}${part.endsWith('```') ? '\n…' : MORE}` : part;
      if (this.shown[index] !== visible) await this.show(index, visible);
    }
  }

  /**
   * Each part as a native stream: started, or appended to with what it gained, and stopped once a
   * later part began. A part that changed other than at its end (a split that moved, a secret
   * recognised late) keeps what it shows until the final reply replaces it. False when the platform
   * would not start a stream: the streams open are stopped and the reply goes on in edits.
   */
  private async streamParts(streaming: NativeStreaming): Promise<boolean> {
    const parts = this.parts();
    const last = parts.length - 1;
    for (const [index, text] of parts.entries()) {
      if (this.finished) return true;
      const messageId = this.messageIds[index];
      const shown = this.shown[index] ?? '';
      if (messageId === undefined) {
        if (text === '') return true;
        const started = await streaming.start(this.target, this.recipient!, text);
        if (started === undefined) {
          await this.toEdits();
          return false;
        }
        this.open.add(index);
        await this.recordPart(index, started, text);
      } else if (this.open.has(index) && text !== shown && text.startsWith(shown)) {
        await streaming.append(this.target, messageId, text.slice(shown.length));
        this.shown[index] = text;
      }
      if (index < last && this.open.delete(index)) await streaming.stop(this.target, this.messageIds[index]!);
    }
    return true;
  }

  /** From native streams to edits: the streams open are stopped first, as edits need. */
  private async toEdits(): Promise<void> {
    await this.closeStreams();
    this.native = undefined;
  }

  private async closeStreams(): Promise<void> {
    const streaming = this.native;
    if (streaming === undefined) return;
    for (const index of this.open) {
      this.open.delete(index);
      await streaming.stop(this.target, this.messageIds[index]!).catch((error: unknown) => {
        this.logger.warn(
          { err: error, thread: this.slot.thread },
          'streamed reply not stopped; the final reply still follows',
        );
      });
    }
  }

  /**
   * The text so far in messages measured as the platform renders them, with room for the marker that
   * more is coming; the status line goes under the last one when it fits there, never into a message
   * of its own, so that the final reply has at least as many parts as the stream posted.
   */
  private parts(): string[] {
    const room = this.client.maxMessageLength - (this.native ? 0 : MORE.length);
    const render = (markdown: string) => this.client.render(markdown);
    const text = this.secrets.scrubStreamed(this.text, room * this.pace.maxParts);
    const parts = text === '' ? [''] : splitFormatted(text, room, render).slice(0, this.pace.maxParts);
    const last = parts.length - 1;
    if (this.activity !== undefined && !this.native) {
      const withStatus = `${parts[last]}${parts[last] === '' ? '' : '\n\n'}⏳ ${this.activity}`;
      if (render(withStatus).length <= room) parts[last] = withStatus;
    }
    return parts;
  }

  private async show(index: number, visible: string): Promise<void> {
    const messageId = this.messageIds[index];
    if (messageId !== undefined) {
      await this.client.edit(this.target, messageId, visible, { draft: true });
      this.shown[index] = visible;
    } else {
      await this.recordPart(index, await this.client.send(this.target, visible, { draft: true }), visible);
    }
  }

  /** A message the stream posted, recorded as that part of the batch's reply. */
  private async recordPart(index: number, messageId: string, shown: string): Promise<void> {
    this.messageIds[index] = messageId;
    this.shown[index] = shown;
    const reply = replyId({ batchId: this.slot.batchId, kind: 'reply' });
    await this.posted.posted(this.slot.thread, reply, index, messageId);
  }

  private failed(error: unknown): void {
    if (isRateLimit(error)) {
      this.notBefore = Date.now() + error.retryAfterMs;
      this.schedule();
      this.logger.info(
        { thread: this.slot.thread, retryAfterMs: error.retryAfterMs },
        'streamed reply rate limited; the next write waits as asked and the final reply still follows',
      );
      return;
    }
    this.logger.warn(
      { err: error, thread: this.slot.thread },
      'streamed reply not updated; the final reply still follows',
    );
  }
}

function isRateLimit(error: unknown): error is PlatformApiError & { retryAfterMs: number } {
  return error instanceof PlatformApiError && error.retryAfterMs !== undefined;
}
