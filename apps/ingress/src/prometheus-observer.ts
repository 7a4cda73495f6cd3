import type { Metrics } from '@tributary/observability';
import type { IngressObserver } from './ingress-observer.js';

/** Ingress outcomes as Prometheus series (platform and outcome labels only). */
export function prometheusObserver(metrics: Metrics): IngressObserver {
  return {
    outcome(platform, outcome) {
      metrics.ingressRequestsTotal.inc({ platform, outcome });
      if (outcome === 'duplicate') metrics.duplicatesTotal.inc({ platform });
    },
    refusal(platform, reason) {
      metrics.refusalsTotal.inc({ platform, reason });
    },
    duration(platform, seconds) {
      metrics.ingressRequestDurationSeconds.observe({ platform }, seconds);
    },
    approvalClick(platform, result) {
      metrics.approvalClicksTotal.inc({ platform, result });
    },
  };
}
