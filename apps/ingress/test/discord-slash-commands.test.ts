import { queueDefaults } from '@tributary/queue';
import { threadKeys } from '@tributary/queue/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordHeaders, type IngressHarness, startIngressHarness } from './ingress-fixture.js';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({ env: { ALLOWED_USERS: '42' } });
});
afterAll(() => h.close());

/** A slash command as Discord posts it, run by `userId` in channel 1200. */
function slashCommand(name: string, userId: string, id: string): string {
  return JSON.stringify({
    type: 2,
    id,
    application_id: '900',
    channel_id: '1200',
    token: 'interaction-token',
    version: 1,
    member: { user: { id: userId, username: `user-${userId}` } },
    data: { id: '1300', name, type: 1 },
  });
}

describe('Discord slash commands', () => {
  it('answer /cancel-all inline, as an ephemeral message, and queue nothing', async () => {
    const before = await h.queuedCount();
    const body = slashCommand('cancel-all', '42', '1100');
    const answer = await h.post('/webhooks/discord', body, discordHeaders(h.discordKey, body));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      type: 4,
      data: { content: 'Cancelled the running turn and dropped 0 waiting messages.', flags: 64 },
    });
    expect(await h.queuedCount()).toBe(before);
    // Its one trace is the record of its delivery (control-command-retries.test.ts): no thread state.
    const keys = threadKeys(h.prefix, queueDefaults.buckets, 'discord:1200');
    expect(await h.redis.exists(keys.state, keys.inbox)).toBe(0);
  });
});

describe('Discord slash commands and the allow lists', () => {
  it('refuse a user outside ALLOWED_USERS, inline, without applying anything', async () => {
    const body = slashCommand('reset', '77', '1101');
    const answer = await h.post('/webhooks/discord', body, discordHeaders(h.discordKey, body));
    expect(answer.body).toEqual({ type: 4, data: { content: 'Not applied: user not allowed.', flags: 64 } });
  });
});

describe('Discord /status and /help', () => {
  it('answer inline with the thread’s state and the command list, applying nothing', async () => {
    const status = slashCommand('status', '42', '1102');
    const answer = await h.post('/webhooks/discord', status, discordHeaders(h.discordKey, status));
    expect(answer.body).toEqual({
      type: 4,
      data: { content: 'No conversation here yet: write to me to start one.', flags: 64 },
    });
    const help = slashCommand('help', '42', '1103');
    const listed = await h.post('/webhooks/discord', help, discordHeaders(h.discordKey, help));
    const content = (listed.body as { data: { content: string } }).data.content;
    for (const command of ['/cancel', '/cancel-all', '/reset', '/status', '/help']) {
      expect(content).toContain(`\`${command}\``);
    }
  });
});
