import type { Metrics } from '@tributary/observability';

/** What a dispatched prompt looked like: the three mission metrics and the queue wait. */
export interface DispatchFigures {
  platform: string;
  /** Envelope tokens of each event's `<sender_context>` block. */
  tokensPerEvent: number[];
  /** ContentBlocks in the prompt, broker-origin blocks included. */
  blocks: number;
  /** Acceptance → dispatch, per event. */
  waitsMs: number[];
}

/** How a turn ended, as the `stop_reason` label: ACP's reasons plus the broker's own. */
export type TurnEnd = string | 'timeout' | 'error' | 'lease_lost' | 'shutdown';

export interface TurnObserver {
  dispatched(figures: DispatchFigures): void;
  ended(end: TurnEnd, seconds: number): void;
}

export function prometheusTurnObserver(metrics: Metrics): TurnObserver {
  return {
    dispatched({ platform, tokensPerEvent, blocks, waitsMs }) {
      for (const tokens of tokensPerEvent) metrics.contextTokensPerEvent.observe({ platform }, tokens);
      metrics.batchSize.observe({ platform }, tokensPerEvent.length);
      metrics.packedBlockCount.observe({ platform }, blocks);
      for (const ms of waitsMs) metrics.queueWaitSeconds.observe({ platform }, ms / 1000);
    },
    ended(end, seconds) {
      metrics.turnDurationSeconds.observe({ stop_reason: end }, seconds);
    },
  };
}
