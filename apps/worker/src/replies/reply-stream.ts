import type { SecretScrubber } from '@tributary/observability';
import type { MessageRef, PlatformClient } from '@tributary/platforms';
import type { PostedParts } from '@tributary/queue';
import type { Logger } from 'pino';
import { replyId } from './outbox.js';

/** Where a stream's placeholder is recorded: the batch's reply, part 0. */
export interface StreamSlot {
  thread: string;
  batchId: string;
}

const MORE = ' …';

/**
 * Streams a turn's reply into a placeholder message on a platform that lets us edit: posted one
 * interval after the first chunk, edited at most once per `intervalMs` after that. The placeholder is recorded as part 0
 * of the batch's reply, so the final delivery edits it into the finished first part instead of
 * posting again. Best effort: a failed post or edit is logged and the final delivery still happens.
 * Each write shows the text so far scrubbed of the worker's secrets as a whole, never chunk by chunk,
 * so a secret split across chunks is recognised; its start is held back until the rest arrives.
 */
export class ReplyStream {
  private text = '';
  /** What the agent is doing (a tool it runs, its plan), shown under the text until the reply is final. */
  private activity: string | undefined;
  private messageId: string | undefined;
  /** When the stream last wrote, or (before the placeholder exists) when the first chunk came. */
  private lastWrite = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private finished = false;

  constructor(
    private readonly client: PlatformClient & Required<Pick<PlatformClient, 'edit'>>,
    private readonly target: MessageRef,
    private readonly posted: Pick<PostedParts, 'posted'>,
    private readonly slot: StreamSlot,
    private readonly intervalMs: number,
    private readonly logger: Logger,
    private readonly secrets: Pick<SecretScrubber, 'scrubStreamed'>,
  ) {}

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
    const wait = Math.max(0, this.lastWrite + this.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.writing.then(() => this.write());
    }, wait);
  }

  /** Stops streaming and waits for a write in flight; the final text is the outbox's to deliver. */
  async finish(): Promise<void> {
    this.finished = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
  }

  private async write(): Promise<void> {
    if (this.finished) return;
    const status = this.activity === undefined ? '' : `${this.text === '' ? '' : '\n\n'}⏳ ${this.activity}`;
    const limit = Math.max(0, this.client.maxMessageLength - MORE.length - status.length);
    const visible = `${this.secrets.scrubStreamed(this.text, limit)}${status}${MORE}`;
    this.lastWrite = Date.now();
    try {
      if (this.messageId === undefined) {
        this.messageId = await this.client.send(this.target, visible);
        await this.posted.posted(
          this.slot.thread,
          replyId({ batchId: this.slot.batchId, kind: 'reply' }),
          0,
          this.messageId,
        );
      } else {
        await this.client.edit(this.target, this.messageId, visible);
      }
    } catch (error) {
      this.logger.warn(
        { err: error, thread: this.slot.thread },
        'streamed reply not updated; the final reply still follows',
      );
    }
  }
}
