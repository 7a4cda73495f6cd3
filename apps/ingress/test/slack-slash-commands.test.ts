import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngressHarness, slackHeaders, startIngressHarness } from './ingress-fixture.js';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness();
});
afterAll(() => h.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
let triggers = 0;

/** A slash command as Slack posts it (form-encoded, the fields of its documented example). */
function slashCommand(
  command: string,
  text: string,
  user: string,
  channel: string,
  trigger?: string,
): string {
  triggers += 1;
  return new URLSearchParams({
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    team_id: 'T0001',
    team_domain: 'example',
    enterprise_id: 'E0001',
    enterprise_name: 'Globular Construct Inc',
    channel_id: channel,
    channel_name: 'test',
    user_id: user,
    user_name: 'Steve',
    command,
    text,
    response_url: 'https://hooks.slack.com/commands/1234/5678',
    trigger_id: trigger ?? `13345224609.738474920.${triggers}`,
    api_app_id: 'A123456',
  }).toString();
}

function command(body: string, headers: Record<string, string> = {}) {
  return h.post('/webhooks/slack/commands', body, { ...FORM, ...slackHeaders(body), ...headers });
}

/** A channel message from `user` that mentions the bot, as the Events API delivers it. */
async function message(channel: string, user: string, ts: string) {
  const body = JSON.stringify({
    type: 'event_callback',
    team_id: 'T0001',
    event_id: `Ev${ts.replace('.', '')}`,
    event: { type: 'app_mention', channel, user, text: '<@UBOT> please look', ts },
  });
  const answer = await h.post('/webhooks/slack', body, slackHeaders(body));
  expect(answer.body).toMatchObject({ outcome: 'accepted' });
}

describe('Slack slash commands', () => {
  it('act on the invoker’s latest conversation in the channel, answered to the invoker alone', async () => {
    expect((await command(slashCommand('/tributary', 'status', 'U1', 'CCMD'))).body).toEqual({
      response_type: 'ephemeral',
      text: 'You have no conversation with me in this channel yet: mention me in a message to start one.',
    });
    await message('CCMD', 'U1', '1700500000.000100');
    await message('CCMD', 'U1', '1700500001.000100');

    const status = await command(slashCommand('/tributary', 'status', 'U1', 'CCMD'));
    expect(status.status).toBe(200);
    // Its latest thread: the second message, waiting (no worker runs under this harness).
    expect((status.body as { text: string }).text).toBe(
      '*Status:* waiting for a worker; 1 message waiting\n*Agent:* no session yet; the next turn starts one',
    );

    const cancelAll = await command(slashCommand('/cancel-all', '', 'U1', 'CCMD'));
    expect(cancelAll.body).toEqual({
      response_type: 'ephemeral',
      text: 'Cancelled the running turn and dropped 1 waiting message.',
    });
    // The earlier thread still has its message: the command acted on the latest only.
    expect(await h.queuedCount()).toBe(1);
  });

  it('find no conversation of someone else’s, and answer /help anywhere', async () => {
    await message('CCMD2', 'U1', '1700500002.000100');
    expect((await command(slashCommand('/cancel', '', 'U2', 'CCMD2'))).body).toMatchObject({
      text: expect.stringContaining('You have no conversation with me in this channel yet'),
    });
    const help = (await command(slashCommand('/tributary', 'help', 'U2', 'CNONE'))).body as { text: string };
    expect(help.text).toContain('*Commands*');
    expect(help.text).toContain('`/tributary cancel` acts on your latest conversation there');
  });

  it('apply a redelivered command once', async () => {
    await message('CCMD3', 'U3', '1700500003.000100');
    const body = slashCommand('/tributary', 'reset', 'U3', 'CCMD3', '99.99.99');
    expect((await command(body)).body).toMatchObject({ text: expect.stringContaining('Reset: dropped 1') });
    expect((await command(body)).body).toMatchObject({
      text: '/reset was applied already; nothing was done again.',
    });
  });

  it('refuse what is not a signed command form, leaving no trace', async () => {
    const before = await h.queuedCount();
    const body = slashCommand('/cancel', '', 'U1', 'CCMD');
    expect((await command(body, { 'x-slack-signature': 'v0=00' })).status).toBe(401);
    const json = await h.post('/webhooks/slack/commands', '{}', {
      'content-type': 'application/json',
      ...slackHeaders('{}'),
    });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ code: 'unsupported_media_type' });
    const noChannel = new URLSearchParams({ command: '/cancel', user_id: 'U1', trigger_id: '1' }).toString();
    const invalid = await command(noChannel);
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({
      code: 'invalid_body',
      error: expect.stringContaining('channel_id'),
    });
    const unknown = await command(slashCommand('/tributary', 'dance', 'U1', 'CCMD'));
    expect(unknown.body).toMatchObject({ outcome: 'ignored', reason: 'slack command /tributary dance' });
    expect(await h.queuedCount()).toBe(before);
  });
});
