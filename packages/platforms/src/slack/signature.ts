import { createHmac } from 'node:crypto';
import type { Verification, WebhookRequest } from '../inbound.js';
import { verifyTimestamped } from '../webhook-checks.js';

export const SLACK_SIGNATURE_HEADER = 'x-slack-signature';
export const SLACK_TIMESTAMP_HEADER = 'x-slack-request-timestamp';

/** Slack's v0 request signature: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}`. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: string | Buffer): string {
  const hmac = createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody);
  return `v0=${hmac.digest('hex')}`;
}

export function verifySlackRequest(signingSecret: string, request: WebhookRequest): Verification {
  return verifyTimestamped(
    {
      timestampHeader: SLACK_TIMESTAMP_HEADER,
      signatureHeader: SLACK_SIGNATURE_HEADER,
      expected: (timestamp, rawBody) => slackSignature(signingSecret, timestamp, rawBody),
    },
    request,
  );
}
