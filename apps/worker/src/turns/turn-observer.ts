import type { Metrics, SteerRefusalReason } from '@tributary/observability';

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
export type TurnEnd = string | 'timeout' | 'error' | 'not_started' | 'lease_lost' | 'shutdown';

/** Events steered into a running turn (docs/adr/0040): counted as its dispatched events are. */
export type SteerFigures = Omit<DispatchFigures, 'blocks'>;

export interface TurnObserver {
  dispatched(figures: DispatchFigures): void;
  steered(figures: SteerFigures): void;
  steerRefused(reason: SteerRefusalReason): void;
  /** A turn's prompt was answered: the events it carried, dispatched and steered. */
  carried(platform: string, events: number): void;
  ended(end: TurnEnd, seconds: number): void;
}

export function prometheusTurnObserver(metrics: Metrics): TurnObserver {
  const eventsSent = (platform: string, tokensPerEvent: number[], waitsMs: number[]) => {
    for (const tokens of tokensPerEvent) metrics.contextTokensPerEvent.observe({ platform }, tokens);
    for (const ms of waitsMs) metrics.queueWaitSeconds.observe({ platform }, ms / 1000);
  };
  return {
    dispatched({ platform, tokensPerEvent, blocks, waitsMs }) {
      eventsSent(platform, tokensPerEvent, waitsMs);
      metrics.packedBlockCount.observe({ platform }, blocks);
    },
    steered({ platform, tokensPerEvent, waitsMs }) {
      eventsSent(platform, tokensPerEvent, waitsMs);
      metrics.steeredEventsTotal.inc({ platform }, tokensPerEvent.length);
    },
    steerRefused(reason) {
      metrics.steerRefusalsTotal.inc({ reason });
    },
    carried(platform, events) {
      metrics.batchSize.observe({ platform }, events);
    },
    ended(end, seconds) {
      metrics.turnDurationSeconds.observe({ stop_reason: end }, seconds);
    },
  };
}
