/** How a delivery ended, for `tributary_ingress_requests_total{outcome}`. */
export type RequestOutcome =
  | 'accepted'
  | 'duplicate'
  | 'ignored'
  | 'control'
  | 'handshake'
  | 'unauthorized'
  | 'invalid'
  | 'refused'
  | 'unavailable'
  | 'error';

export type RefusalReason = 'backlog_full' | 'rate_limited' | 'gate';

/** What ingress reports about each delivery; the Prometheus implementation lives with the metrics. */
export interface IngressObserver {
  outcome(platform: string, outcome: RequestOutcome): void;
  refusal(platform: string, reason: RefusalReason): void;
  duration(platform: string, seconds: number): void;
}
