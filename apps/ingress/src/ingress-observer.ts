import type { IngressOutcome, RefusalReason } from '@tributary/observability';

/** How a delivery ended, for `tributary_ingress_requests_total{outcome}`. */
export type RequestOutcome = IngressOutcome;
export type { RefusalReason };

/** What ingress reports about each delivery; the Prometheus implementation lives with the metrics. */
export interface IngressObserver {
  outcome(platform: string, outcome: RequestOutcome): void;
  refusal(platform: string, reason: RefusalReason): void;
  duration(platform: string, seconds: number): void;
  /** What became of a click on a permission request's button. */
  approvalClick(platform: string, result: string): void;
}
