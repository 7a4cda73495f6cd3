import { SlackInboundAdapter, slackSignature, type WebhookRequest } from '../src/index.js';
import { NOW, webhookRequest } from './support-inbound.js';

export const SIGNING_SECRET = 'slack-signing-secret-for-tests';
export const BOT_USER = 'U0BOT';
export const BOT_ID = 'B0BOT';

export const slack = new SlackInboundAdapter({
  signingSecret: SIGNING_SECRET,
  selfUserId: BOT_USER,
  selfBotId: BOT_ID,
});

/** 2025-01-01T09:30:00.000Z as a Slack ts. */
export const TS = '1735723800.000200';

export function slackMessage(event: Record<string, unknown> = {}) {
  return {
    token: 'unused',
    team_id: 'T0TEAM',
    type: 'event_callback',
    event_id: 'Ev0MESSAGE',
    event_time: 1735723800,
    event: {
      type: 'message',
      channel: 'C0CHAN',
      channel_type: 'channel',
      user: 'U0ALICE',
      text: 'check the build',
      ts: TS,
      ...event,
    },
  };
}

/** A delivery signed the way Slack signs it, at NOW. */
export function signedSlackRequest(body: unknown, headers: Record<string, string> = {}): WebhookRequest {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const timestamp = String(Math.floor(NOW / 1000));
  return webhookRequest(raw, {
    'x-slack-request-timestamp': timestamp,
    'x-slack-signature': slackSignature(SIGNING_SECRET, timestamp, raw),
    ...headers,
  });
}
