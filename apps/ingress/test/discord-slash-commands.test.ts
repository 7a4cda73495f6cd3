import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordHeaders, type IngressHarness, startIngressHarness } from './ingress-fixture.js';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness();
});
afterAll(() => h.close());

describe('Discord slash commands', () => {
  it('answer /cancel-all inline, as an ephemeral message, and queue nothing', async () => {
    const before = await h.keyCount();
    const body = JSON.stringify({
      type: 2,
      id: '1100',
      application_id: '900',
      channel_id: '1200',
      token: 'interaction-token',
      version: 1,
      member: { user: { id: '42', username: 'ada' } },
      data: { id: '1300', name: 'cancel-all', type: 1 },
    });
    const answer = await h.post('/webhooks/discord', body, discordHeaders(h.discordKey, body));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      type: 4,
      data: { content: 'Cancelled the running turn and dropped 0 waiting messages.', flags: 64 },
    });
    expect(await h.keyCount()).toBe(before);
  });
});
