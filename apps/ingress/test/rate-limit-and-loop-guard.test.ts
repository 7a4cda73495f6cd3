import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngressHarness, slackHeaders, slackMessage, startIngressHarness } from './ingress-fixture.js';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({
    env: { RATE_LIMIT_PER_MINUTE: '8', ALLOW_BOT_MESSAGES: 'all', MAX_BOT_TURNS: '2' },
  });
});
afterAll(() => h.close());

const thread = { thread_ts: '1700000500.000100' };
let n = 0;
const post = async (fields: Record<string, unknown>, text = 'next step') => {
  const body = slackMessage(text, { ...thread, ts: `1700000500.${String(++n).padStart(6, '0')}`, ...fields });
  return h.post('/webhooks/slack', body, slackHeaders(body));
};

describe('loop guard and rate limit', () => {
  it('stops a run of bot messages in a thread until a human speaks', async () => {
    const bot = { user: undefined, bot_id: 'B7', subtype: 'bot_message' };
    expect((await post({}, '<@UBOT> start')).body.outcome).toBe('accepted');
    expect((await post(bot)).body.outcome).toBe('accepted');
    expect((await post(bot)).body.outcome).toBe('accepted');
    expect((await post(bot)).body).toMatchObject({ outcome: 'ignored', reason: 'bot-turn-limit' });
    expect((await post({})).body.outcome).toBe('accepted');
    expect((await post(bot)).body.outcome).toBe('accepted');
  });

  it('refuses a source over its rate with 429 and queues nothing', async () => {
    let answer = await post({});
    for (let i = 0; i < 8 && answer.status !== 429; i++) answer = await post({});
    const before = await h.queuedCount();
    answer = await post({});
    expect(answer.status).toBe(429);
    expect(answer.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await h.queuedCount()).toBe(before);
    expect(await h.metrics()).toMatch(
      /tributary_refusals_total\{platform="slack",reason="rate_limited"\} [1-9]/,
    );
  });
});
