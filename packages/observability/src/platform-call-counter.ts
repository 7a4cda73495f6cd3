import type { Logger } from 'pino';
import type { Metrics } from './create-metrics.js';
import { apiStatusLabel } from './label-values.js';

/**
 * What the platform clients report: every API call by status (`0`: no answer), for the
 * platform-errors panels and alerts; and each message a platform refused as formatted that went out
 * as plain text instead, at warn, since its formatting is lost.
 */
export function platformCallHooks(metrics: Metrics, logger: Logger) {
  return {
    onCall(platform: string, method: string, status: number): void {
      metrics.platformApiCallsTotal.inc({ platform, method, status: apiStatusLabel(status) });
    },
    onPlainFallback(platform: string, method: string, reason: string): void {
      metrics.platformPlainFallbacksTotal.inc({ platform, method });
      logger.warn(
        { platform, method, reason },
        'the platform refused the formatted text; it was posted as plain text',
      );
    },
    onStreamingRefused(platform: string, reason: string): void {
      metrics.platformStreamingRefusalsTotal.inc({ platform });
      logger.warn(
        { platform, reason },
        'the workspace refused native streaming; replies stream as edits (set SLACK_REPLY_STREAMING=edits to skip the try)',
      );
    },
  };
}
