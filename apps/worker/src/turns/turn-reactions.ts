import {
  type MessageRef,
  OrderedByKey,
  type PlatformClient,
  platformOfThread,
  type Reaction,
} from '@tributary/platforms';
import type { Logger } from 'pino';
import type { TurnSignal } from './turn-signals.js';

/** The reaction a signal shows; undefined: take the progress reaction back and show nothing new. */
function reactionOf(signal: TurnSignal): Reaction | undefined {
  switch (signal.kind) {
    case 'started':
      return 'working';
    case 'progress':
      return 'tool';
    case 'stall-soft':
    case 'stall-hard':
      return signal.kind;
    case 'finished':
      if (signal.ending === 'answered') return 'done';
      return signal.ending === 'failed' ? 'failed' : undefined;
  }
}

/**
 * Shows a running turn's progress on the batch's trailing message: one progress reaction at a time
 * (the previous one is taken back), beside the 👀 that ingress put on acceptance. The 'working'
 * reaction waits `workingDelayMs`: a turn that ends or shows a tool sooner never shows it, so a quick
 * answer costs one reaction call instead of three and does not flicker
 * (docs/adr/0025-quiet-progress-reactions.md). Best effort: a reaction that fails is logged, never
 * fails the turn.
 */
export class TurnReactions {
  private readonly shown = new Map<string, Reaction>();
  private readonly order = new OrderedByKey();
  /** 'working' reactions not shown yet, by batch. */
  private readonly delayed = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly logger: Logger,
    private readonly workingDelayMs: number,
  ) {}

  readonly listener = (signal: TurnSignal): void => {
    const client = this.clients.get(platformOfThread(signal.thread));
    if (!client?.react) return;
    const ref = signal.target;
    // Signals of one batch are applied in order, so a late 'working' cannot land after 'done'.
    const show = () => this.order.run(signal.batchId, () => this.apply(client, ref, signal));
    // Any later signal of the batch replaces a 'working' still waiting to be shown.
    clearTimeout(this.delayed.get(signal.batchId));
    this.delayed.delete(signal.batchId);
    if (signal.kind !== 'started' || this.workingDelayMs === 0) {
      show();
      return;
    }
    const timer = setTimeout(() => {
      this.delayed.delete(signal.batchId);
      show();
    }, this.workingDelayMs);
    // A stopping worker hands its turns over ('finished'), which clears the timer; never wait for it.
    timer.unref();
    this.delayed.set(signal.batchId, timer);
  };

  private async apply(client: PlatformClient, ref: MessageRef, signal: TurnSignal): Promise<void> {
    // A turn handed to another worker is that worker's to show.
    if (signal.ending === 'handed-over') return void this.shown.delete(signal.batchId);
    const reaction = reactionOf(signal);
    const before = this.shown.get(signal.batchId);
    try {
      if (before !== undefined && before !== reaction) await client.unreact?.(ref, before);
      if (reaction !== undefined) await client.react!(ref, reaction);
      if (signal.kind === 'finished' || reaction === undefined) this.shown.delete(signal.batchId);
      else this.shown.set(signal.batchId, reaction);
    } catch (error) {
      this.logger.warn({ err: error, thread: signal.thread, reaction }, 'progress reaction failed');
    }
  }
}
