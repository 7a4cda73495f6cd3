import { setTimeout as sleep } from 'node:timers/promises';
import {
  classifyHttpAnswer,
  DEFAULT_RETRY_POLICY,
  nextStep,
  type RetryPolicy,
  readAnswer,
  signedRequestHeaders,
  type Verdict,
} from '@tributary/platforms';
import type { Logger } from 'pino';

export interface DeliveryOptions extends RetryPolicy {
  /** Forwards held at once, in flight included; past it new messages are dropped. */
  capacity: number;
  /** Posts open at once across channels, so a burst over many channels does not open a socket each. */
  maxInFlight: number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  ...DEFAULT_RETRY_POLICY,
  capacity: 10_000,
  maxInFlight: 16,
  // Ingress restarting or scaling takes longer than a platform's hiccup: more, longer waits per message.
  maxAttempts: 12,
  maxDelayMs: 30_000,
  // Twelve attempts back off for three minutes at most; the rest is room for ingress's Retry-After.
  maxTotalWaitMs: 300_000,
};

export interface Delivery {
  channelId: string;
  messageId: string;
  body: string;
}

/** Status 0: no answer. */
type Attempt = { status: number; verdict: Verdict };

/**
 * Posts forwards to ingress, one channel's in arrival order, channels independently of each other.
 * The receiver being down or overloaded is retried with backoff; a refusal of the message itself is not.
 */
export class DeliveryQueue {
  readonly #lanes = new Map<string, Delivery[]>();
  readonly #giveUp = new AbortController();
  #size = 0;
  #inFlight = 0;
  readonly #waitingForSlot: (() => void)[] = [];
  #closing = false;
  #drained: (() => void) | undefined;

  constructor(
    private readonly url: string,
    private readonly secret: string,
    private readonly options: DeliveryOptions,
    private readonly logger: Logger,
  ) {}

  /** False when the message was dropped (queue full, or shutting down); the reason is logged. */
  enqueue(delivery: Delivery): boolean {
    const { channelId, messageId } = delivery;
    if (this.#closing) {
      this.logger.warn({ channelId, messageId }, 'shutting down: message not forwarded');
      return false;
    }
    if (this.#size >= this.options.capacity) {
      this.logger.error(
        { channelId, messageId, capacity: this.options.capacity },
        'FORWARD QUEUE FULL: message dropped; ingress is down or not keeping up',
      );
      return false;
    }
    this.#size++;
    const lane = this.#lanes.get(channelId);
    if (lane) {
      lane.push(delivery);
    } else {
      this.#lanes.set(channelId, [delivery]);
      void this.#runLane(channelId);
    }
    return true;
  }

  /** Stops taking messages and waits for the held ones up to `graceMs`; resolves to how many were abandoned. */
  async close(graceMs: number): Promise<number> {
    this.#closing = true;
    if (this.#size > 0) {
      const drained = new Promise<void>((resolve) => {
        this.#drained = resolve;
      });
      const timer = new AbortController();
      await Promise.race([drained, sleep(graceMs, undefined, { signal: timer.signal }).catch(() => {})]);
      timer.abort();
    }
    const abandoned = this.#size;
    if (abandoned > 0) {
      this.#giveUp.abort();
      this.logger.error({ abandoned, graceMs }, 'shutdown grace period over: messages not forwarded');
    }
    return abandoned;
  }

  async #runLane(channelId: string): Promise<void> {
    const lane = this.#lanes.get(channelId)!;
    for (let next = lane[0]; next !== undefined && !this.#giveUp.signal.aborted; next = lane[0]) {
      await this.#deliver(next);
      lane.shift();
      this.#size--;
    }
    this.#lanes.delete(channelId);
    if (this.#size === 0) this.#drained?.();
  }

  async #deliver(delivery: Delivery): Promise<void> {
    const { channelId, messageId } = delivery;
    let waitedMs = 0;
    for (let attempt = 1; ; attempt++) {
      await this.#takeSlot();
      const { status, verdict } = await this.#post(delivery).finally(() => this.#releaseSlot());
      if (this.#giveUp.signal.aborted) return;
      if (verdict.kind === 'ok') {
        this.logger.debug({ channelId, messageId, attempt }, 'message forwarded');
        return;
      }
      const step = nextStep(verdict, attempt, waitedMs, this.options, Math.random);
      if (step.kind === 'give-up' && step.because === 'not-retryable') {
        this.logger.error(
          { channelId, messageId, status, response: verdict.detail },
          'ingress refused the forwarded message: dropped, a retry would be refused too',
        );
        return;
      }
      if (step.kind === 'give-up') {
        this.logger.error(
          {
            channelId,
            messageId,
            attempts: attempt,
            waitedMs,
            because: step.because,
            reason: verdict.detail,
          },
          'could not forward the message: giving up',
        );
        return;
      }
      this.logger.warn(
        { channelId, messageId, attempt, delayMs: step.delayMs, reason: verdict.detail },
        'forward failed; retrying',
      );
      try {
        await sleep(step.delayMs, undefined, { signal: this.#giveUp.signal });
      } catch {
        return;
      }
      waitedMs += step.delayMs;
    }
  }

  async #takeSlot(): Promise<void> {
    if (this.#inFlight < this.options.maxInFlight) {
      this.#inFlight++;
      return;
    }
    // The releasing lane hands its slot straight over, so #inFlight stays as it is.
    await new Promise<void>((resolve) => this.#waitingForSlot.push(resolve));
  }

  #releaseSlot(): void {
    const next = this.#waitingForSlot.shift();
    if (next) next();
    else this.#inFlight--;
  }

  async #post({ body }: Delivery): Promise<Attempt> {
    try {
      const response = await fetch(this.url, {
        method: 'POST',
        // Signed per attempt: a retry carries a fresh timestamp, inside ingress's replay window.
        headers: { 'content-type': 'application/json', ...signedRequestHeaders(this.secret, body) },
        body,
        signal: AbortSignal.any([this.#giveUp.signal, AbortSignal.timeout(this.options.timeoutMs)]),
      });
      const answer = await readAnswer(response);
      return { status: answer.status, verdict: classifyHttpAnswer(answer, Date.now()) };
    } catch (error) {
      return { status: 0, verdict: { kind: 'transient', detail: describeFetchError(error) } };
    }
  }
}

// fetch hides the useful part (ECONNREFUSED, timeout) in `cause`.
function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
