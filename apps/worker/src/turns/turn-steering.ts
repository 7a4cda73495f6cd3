import type { AgentInfo, SessionPool } from '@tributary/acp';
import type { SteerRefusalReason } from '@tributary/observability';
import { type ArrivalEvent, arrivalFromBody, envelopeTokens, packBatch } from '@tributary/packing';
import { platformOfThread } from '@tributary/platforms';
import { type Batch, LeaseLostError, type QueuedMessage } from '@tributary/queue';
import type { Logger } from 'pino';
import type { AttachmentContents } from '../attachments/attachment-contents.js';
import type { TurnObserver } from './turn-observer.js';

/** What a worker needs to steer: where steering is on, and how the batch grows in Redis. */
export interface SteeringDeps {
  /** Whether the thread's route steers (STEERING); the agent must advertise it too. */
  on(thread: string): boolean;
  /**
   * ThreadTurns.steer: the messages behind `through` (the last the turn received), taken into the
   * running batch under the lease.
   */
  take(
    batch: Batch,
    through: string,
  ): Promise<{ kind: 'taken'; messages: QueuedMessage[] } | { kind: 'full' }>;
}

export interface SteeringTurn {
  batch: Batch;
  sessionId: string;
  caps: AgentInfo['promptCapabilities'];
  /** The turn's: files of a steered message not yet downloaded when it aborts stay links. */
  signal: AbortSignal;
  log: Logger;
}

export interface SteeringTools {
  take: SteeringDeps['take'];
  pool: Pick<SessionPool, 'steer'>;
  attachments?: AttachmentContents;
  observer?: TurnObserver;
}

/**
 * The steers of one running turn (docs/adr/0040). Each pass first takes the waiting messages into the
 * batch in Redis (fenced), and only then sends them, packed as a batch is, into the turn: a crash in
 * between re-delivers them with the batch. Passes run one at a time, so steers reach the agent in
 * acceptance order. The first refusal ends steering for the turn: a later message must not overtake
 * the refused one, which leads the next batch (the commit acknowledges only `deliveredThrough`).
 */
export class TurnSteering {
  #open = true;
  #queued = false;
  #pass: Promise<void> = Promise.resolve();
  #deliveredThrough: string;

  constructor(
    private readonly tools: SteeringTools,
    private readonly turn: SteeringTurn,
  ) {
    this.#deliveredThrough = turn.batch.messages.at(-1)!.streamId;
  }

  /** The stream id of the last message the agent received in this turn. */
  get deliveredThrough(): string {
    return this.#deliveredThrough;
  }

  /** Messages may wait behind the batch (one arrived, or the turn just started): one more pass. */
  poke(): void {
    if (!this.#open || this.#queued) return;
    this.#queued = true;
    this.#pass = this.#pass.then(() => {
      this.#queued = false;
      return this.#steer().catch((error: unknown) => {
        this.#open = false;
        this.tools.observer?.steerRefused('failed');
        this.turn.log.warn(
          { err: error },
          'steering stopped for this turn; later messages wait for the next',
        );
      });
    });
  }

  /** The turn ended: no more steers; resolves once the pass in flight settled. */
  async close(): Promise<void> {
    this.#open = false;
    await this.#pass;
  }

  async #steer(): Promise<void> {
    if (!this.#open) return;
    const { batch, log } = this.turn;
    let taken: Awaited<ReturnType<SteeringTools['take']>>;
    try {
      taken = await this.tools.take(batch, this.#deliveredThrough);
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      this.#open = false;
      return;
    }
    if (taken.kind === 'full') return this.#refused('batch_full', 0);
    const { messages } = taken;
    if (messages.length === 0) return;
    if (!this.#open) return this.#refused('turn_ended', messages.length);
    const events = messages.map((message) => arrivalFromBody(message.body));
    const files = await this.tools.attachments?.resolve(events, this.turn.caps, this.turn.signal);
    try {
      const blocks = packBatch(files?.events ?? events, this.turn.caps);
      const thread = batch.lease.thread;
      const outcome = await this.tools.pool.steer(thread, this.turn.sessionId, blocks);
      if (outcome.kind === 'refused') return this.#refused(outcome.reason, messages.length);
      batch.messages.push(...messages);
      this.#deliveredThrough = messages.at(-1)!.streamId;
      this.#observe(thread, messages, events);
      log.info({ steered: messages.length, blocks: blocks.length }, 'steer');
    } finally {
      files?.release();
    }
  }

  #observe(thread: string, messages: QueuedMessage[], events: ArrivalEvent[]): void {
    const now = Date.now();
    this.tools.observer?.steered({
      platform: platformOfThread(thread),
      tokensPerEvent: events.map(envelopeTokens),
      waitsMs: messages.map((m) => now - m.acceptedAt),
    });
  }

  #refused(reason: SteerRefusalReason, messages: number): void {
    this.#open = false;
    this.tools.observer?.steerRefused(reason);
    this.turn.log.info({ reason, messages }, 'steer refused; the messages wait for the next turn');
  }
}
