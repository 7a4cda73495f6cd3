import { FAKE_SLACK_TEAM, type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformApiError, type PlatformClient } from '../src/outbound.js';
import { createPlatformClients } from '../src/platform-clients.js';
import { SlackInboundAdapter } from '../src/slack/inbound.js';
import { SlackInteractivityAdapter } from '../src/slack/interactivity.js';
import { answering } from './outbound-fixture.js';
import { SIGNING_SECRET, signedSlackRequest, slackMessage, TS } from './slack-inbound-fixtures.js';
import { messageOf } from './support-inbound.js';

// Two workspaces on one deployment (docs/adr/0061): the default one, answered with SLACK_BOT_TOKEN, and
// TSECOND with a token of its own, whose bot user and channels are its own.
const SECOND = {
  id: 'TSECOND',
  token: 'xoxb-second-team-token',
  bot: { userId: 'USECONDBOT', name: 'second-bot' },
  channels: ['C2GENERAL'],
};

describe('Slack deliveries from several teams', () => {
  const adapter = new SlackInboundAdapter({
    signingSecret: SIGNING_SECRET,
    selfUserId: 'U0BOT',
    teams: new Map([[SECOND.id, { selfUserId: SECOND.bot.userId }]]),
  });
  const fromTeam = (team: string, event: Record<string, unknown> = {}) =>
    adapter.parse(signedSlackRequest({ ...slackMessage(event), team_id: team }));

  it("keys a further team's threads by the team and the deployment's own team's as before", () => {
    const own = messageOf(fromTeam('T0TEAM'));
    const second = messageOf(fromTeam(SECOND.id, { channel: 'C2GENERAL' }));
    expect(own.thread).toBe(`slack:C0CHAN:${TS}`);
    expect(second.thread).toBe(`slack:TSECOND:C2GENERAL:${TS}`);
    // A message is one message wherever it is delivered from: its dedup key names no team.
    expect(second.idempotencyKey).toBe(`slack:C2GENERAL:${TS}`);
    expect(second.ref).toMatchObject({ channelId: 'C2GENERAL', workspaceId: SECOND.id });
    expect(second.event.workspaceId).toBe(SECOND.id);
  });

  it("knows our bot by each team's own bot user", () => {
    // The default team's bot id means nothing in the second team, and the reverse.
    expect(fromTeam(SECOND.id, { user: SECOND.bot.userId })).toMatchObject({ kind: 'ignored' });
    expect(fromTeam(SECOND.id, { user: 'U0BOT' })).toMatchObject({ kind: 'message' });
    expect(fromTeam('T0TEAM', { user: 'U0BOT' })).toMatchObject({ kind: 'ignored' });
  });

  it("keys a further team's edits and deletes in its threads", () => {
    const edit = fromTeam(SECOND.id, {
      subtype: 'message_changed',
      message: { type: 'message', user: 'U0ALICE', text: 'v2', ts: TS, edited: { user: 'U0ALICE', ts: TS } },
    });
    expect(edit).toMatchObject({ kind: 'edit', message: { thread: `slack:TSECOND:C0CHAN:${TS}` } });
    const deleted = fromTeam(SECOND.id, { subtype: 'message_deleted', deleted_ts: TS, user: undefined });
    expect(deleted).toMatchObject({
      kind: 'delete',
      thread: `slack:TSECOND:C0CHAN:${TS}`,
      ref: { workspaceId: SECOND.id },
    });
  });

  it("names the clicker's team on an approval click, whose groups are looked up there", () => {
    const interactivity = new SlackInteractivityAdapter({ signingSecret: SIGNING_SECRET });
    const payload = {
      type: 'block_actions',
      team: { id: SECOND.id, domain: 'second' },
      user: { id: 'U2ALICE', username: 'alice' },
      container: { type: 'message', channel_id: 'C2GENERAL', message_ts: TS, thread_ts: TS },
      actions: [{ action_id: 'approval_0', value: 'ap:ap1:0', action_ts: '1735723801.1' }],
    };
    const raw = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const click = interactivity.parse(signedSlackRequest(raw));
    expect(click).toMatchObject({
      kind: 'approval',
      ref: { channelId: 'C2GENERAL', workspaceId: SECOND.id },
    });
  });
});

describe('one Slack client answering several teams', () => {
  let fake: FakePlatformApi;
  let slack: PlatformClient;

  beforeAll(async () => {
    fake = await startFakePlatformApi({ slackTeams: [SECOND] });
    slack = clientWith(fake.tokens.slack);
  });
  afterAll(() => fake.close());

  function clientWith(homeToken: string | undefined): PlatformClient {
    const clients = createPlatformClients({
      slack: {
        botToken: homeToken,
        teamTokens: new Map([[SECOND.id, SECOND.token]]),
        apiUrl: fake.urls.slack,
        filesUrl: fake.origin,
      },
    });
    return clients.get('slack')!;
  }

  it("answers each team with its own token, and any other team with the deployment's", async () => {
    const before = fake.calls().length;
    await slack.send(answering('slack', 'C2GENERAL', { workspaceId: SECOND.id }), 'to the second team');
    await slack.send(answering('slack', 'C1HOME', { workspaceId: 'T0TEAM' }), 'to our own team');
    await slack.react!(answering('slack', 'C2GENERAL', { workspaceId: SECOND.id, messageId: TS }), 'done');
    const calls = fake.calls().slice(before);
    expect(calls.map((call) => [call.method, call.account, call.status])).toEqual([
      ['chat.postMessage', SECOND.id, 200],
      ['chat.postMessage', FAKE_SLACK_TEAM, 200],
      ['reactions.add', SECOND.id, 200],
    ]);
  });

  it("is refused where a team's channel is answered with another team's token (the fake checks)", async () => {
    const wrong = slack.send(answering('slack', 'C2GENERAL', { workspaceId: 'T0TEAM' }), 'misrouted');
    await expect(wrong).rejects.toMatchObject({ code: 'channel_not_found' });
  });

  it("asks who we are, people's names and file bytes with the team's token", async () => {
    fake.seedSlackUser({ id: 'U2ALICE', name: 'alice', displayName: 'Alice' });
    const file = fake.seedFile({ name: 'a.txt', bytes: Buffer.from('second'), contentType: 'text/plain' });
    const before = fake.calls().length;
    expect(await slack.whoAmI!(SECOND.id)).toEqual({
      id: SECOND.bot.userId,
      name: SECOND.bot.name,
      workspaceId: SECOND.id,
    });
    expect(await slack.userNames!('U2ALICE', SECOND.id)).toEqual({ name: 'alice', displayName: 'Alice' });
    const fetched = await slack.fetchFile!(file.slackUrl, { maxBytes: 1024, timeoutMs: 5_000 }, SECOND.id);
    expect(fetched.bytes.toString()).toBe('second');
    expect(await slack.whoAmI!()).toMatchObject({ id: fake.bots.slack.userId, workspaceId: FAKE_SLACK_TEAM });
    expect(
      fake
        .calls()
        .slice(before)
        .map((call) => [call.method, call.account]),
    ).toEqual([
      ['auth.test', SECOND.id],
      ['users.info', SECOND.id],
      ['file', SECOND.id],
      ['auth.test', FAKE_SLACK_TEAM],
    ]);
  });

  it('says which token is missing when a team has none and there is no default token, never sending', async () => {
    const teamsOnly = clientWith(undefined);
    const before = fake.calls().length;
    const lost = teamsOnly.send(answering('slack', 'C1HOME', { workspaceId: 'T0OTHER' }), 'nobody answers');
    await expect(lost).rejects.toBeInstanceOf(PlatformApiError);
    await expect(lost).rejects.toMatchObject({
      code: 'no_team_token',
      message: /T0OTHER.*SLACK_TEAM_TOKENS_DIR/,
    });
    expect(fake.calls().length).toBe(before);
    // The team it has a token for is still answered.
    await teamsOnly.send(answering('slack', 'C2GENERAL', { workspaceId: SECOND.id }), 'still answered');
  });
});
