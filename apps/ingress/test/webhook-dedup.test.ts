import { GatewayInboundAdapter } from '@tributary/platforms';
import { queueDefaults } from '@tributary/queue';
import { dedupMember, threadKeys } from '@tributary/queue/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  slackHeaders,
  slackMessage,
  startIngressHarness,
  telegramHeaders,
  telegramUpdate,
} from './ingress-fixture.js';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness();
});
afterAll(() => h.close());

describe('duplicate deliveries become one queued message', () => {
  it('ignores a Telegram update older than the freshness window: a replay the dedup window forgot', async () => {
    const before = await h.queuedCount();
    // Dated 2001-01-01, delivered now with the right secret token.
    const replay = telegramUpdate('@tributary_bot old news', 7001, 7001, 978_307_200);
    const answer = await h.post('/webhooks/telegram', replay, telegramHeaders());
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ outcome: 'ignored' });
    expect(await h.queuedCount()).toBe(before);
  });

  it('absorbs Slack retries of the same event', async () => {
    const before = await h.queuedCount();
    const body = slackMessage('<@UBOT> check the build', { ts: '1700000100.000200' });
    const first = await h.post('/webhooks/slack', body, slackHeaders(body));
    const retry = await h.post('/webhooks/slack', body, {
      ...slackHeaders(body),
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_timeout',
    });
    expect([first.body.outcome, retry.body.outcome]).toEqual(['accepted', 'duplicate']);
    expect(retry.status).toBe(200);
    expect(await h.queuedCount()).toBe(before + 1);
  });

  it('absorbs the message + app_mention pair of one @mention', async () => {
    const before = await h.queuedCount();
    const fields = { ts: '1700000200.000300' };
    const message = slackMessage('<@UBOT> run e2e', fields, 'message');
    const mention = slackMessage('<@UBOT> run e2e', fields, 'app_mention');
    const answers = await Promise.all([
      h.post('/webhooks/slack', message, slackHeaders(message)),
      h.post('/webhooks/slack', mention, slackHeaders(mention)),
    ]);
    expect(answers.map((a) => a.body.outcome).sort()).toEqual(['accepted', 'duplicate']);
    expect(await h.queuedCount()).toBe(before + 1);
  });

  it("absorbs Telegram's repeated update_id", async () => {
    const before = await h.queuedCount();
    const body = telegramUpdate('@tributary_bot hello', 5001);
    const outcomes = [];
    for (let i = 0; i < 3; i++)
      outcomes.push((await h.post('/webhooks/telegram', body, telegramHeaders())).body.outcome);
    expect(outcomes).toEqual(['accepted', 'duplicate', 'duplicate']);
    expect(await h.queuedCount()).toBe(before + 1);
    expect(await h.metrics()).toMatch(/tributary_duplicates_total\{platform="telegram"\} 2/);
  });

  it('admits a direct message without a mention, and ignores the same words in a group', async () => {
    const privately = JSON.parse(telegramUpdate('hello there', 7001)) as { message: Record<string, unknown> };
    privately.message.chat = { id: 555, type: 'private', first_name: 'Ada' };
    const direct = await h.post('/webhooks/telegram', JSON.stringify(privately), telegramHeaders());
    // A group this ingress has never been involved in.
    const inGroup = JSON.parse(telegramUpdate('hello there', 7002)) as { message: Record<string, unknown> };
    inGroup.message.chat = { id: -2002, type: 'group', title: 'elsewhere' };
    const group = await h.post('/webhooks/telegram', JSON.stringify(inGroup), telegramHeaders());
    expect(direct.body.outcome).toBe('accepted');
    expect(group.body).toMatchObject({ outcome: 'ignored', reason: 'not-addressed' });
  });

  it("keeps a message under the identity its adapter gave it, whatever the delivery's own id", async () => {
    const message_id = `M-${Date.now()}`;
    const first = gatewayEvent('<@UBOT> build it', { message_id });
    const adapter = new GatewayInboundAdapter({ secret: SECRETS.GATEWAY_SECRET });
    const inbound = adapter.parse({ rawBody: Buffer.from(first), headers: {}, now: Date.now() });
    if (inbound.kind !== 'message') throw new Error(`the gateway parsed ${inbound.kind}`);
    const { thread, idempotencyKey } = inbound.message;
    // A redelivery of the same platform message comes as a new event with an id of its own.
    const again = gatewayEvent('<@UBOT> build it', { message_id });
    const outcomes = [];
    for (const body of [first, again]) {
      outcomes.push(
        (await h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body))).body.outcome,
      );
    }
    expect(outcomes).toEqual(['accepted', 'duplicate']);
    const keys = threadKeys(h.prefix, queueDefaults.buckets, thread);
    expect(await h.redis.hkeys(keys.dedup)).toEqual([dedupMember(thread, idempotencyKey)]);
  });

  it('answers url_verification with the challenge and queues nothing', async () => {
    const before = await h.keyCount();
    const body = JSON.stringify({ type: 'url_verification', token: 't', challenge: 'c-123' });
    const answer = await h.post('/webhooks/slack', body, slackHeaders(body));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ challenge: 'c-123' });
    expect(await h.keyCount()).toBe(before);
  });
});
