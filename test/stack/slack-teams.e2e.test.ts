import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FAKE_SLACK_TEAM,
  type FakeApiCall,
  type RedisHandle,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlackEvent, type Stack, startStack } from './stack-fixture.js';

// A second Slack workspace with its own bot token, bot user and channel (docs/adr/0061). The fake
// answers a call on a channel with another workspace's token `channel_not_found`, as Slack does.
const SECOND = {
  id: 'TSECOND',
  token: 'xoxb-second-team-token',
  bot: { userId: 'USECONDBOT', name: 'second-bot' },
  channels: ['C2GENERAL'],
};
const ADMIN = 'slack-teams-admin-token-0123456789';

let redis: RedisHandle;
let tokensDir: string;
beforeAll(async () => {
  redis = await startRedis();
  tokensDir = await mkdtemp(join(tmpdir(), 'tributary-team-tokens-'));
  await writeFile(join(tokensDir, SECOND.id), `${SECOND.token}\n`);
});
afterAll(async () => {
  await redis.stop();
  await rm(tokensDir, { recursive: true, force: true });
});

let seq = 0;

/** A message of `team` in `channel`, mentioning `bot`, as a new thread or in thread `root`. */
async function say(stack: Stack, team: string, channel: string, bot: string, root?: string) {
  seq += 1;
  const ts = `1700800000.${String(seq).padStart(6, '0')}`;
  const event = {
    type: 'message',
    channel,
    channel_type: 'channel',
    user: `U${team}ALICE`,
    text: `<@${bot}> hello from ${team}\n@agent {"reply": "answer ${seq}"}`,
    ts,
    ...(root === undefined ? {} : { thread_ts: root }),
  };
  const body = JSON.stringify({ type: 'event_callback', team_id: team, event_id: `EvTeams${seq}`, event });
  const answer = await postSlackEvent(stack, body);
  return { ts, reply: `answer ${seq}`, answer: answer.body };
}

function repliesIn(stack: Stack, channel: string): FakeApiCall[] {
  return stack
    .calls('slack', 'chat.postMessage')
    .filter((call) => (call.body as { channel: string }).channel === channel);
}

async function replied(stack: Stack, channel: string, text: string): Promise<FakeApiCall> {
  let found: FakeApiCall | undefined;
  await waitFor(
    () => {
      found = repliesIn(stack, channel).find((call) => (call.body as { text: string }).text === text);
      return found !== undefined;
    },
    { what: () => `the reply "${text}" in ${channel}; warnings: ${JSON.stringify(stack.warnings())}` },
  );
  return found!;
}

describe('two Slack teams on one deployment', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ SLACK_TEAM_TOKENS_DIR: tokensDir }, redis, {}, { slackTeams: [SECOND] });
  });
  afterAll(() => stack.close());

  it('answers each team with its own token, in threads whose keys tell the teams apart', async () => {
    const own = await say(stack, FAKE_SLACK_TEAM, 'C1HOME', 'UBOT');
    // Our bot in the second team is its own user, found with that team's token at start.
    const second = await say(stack, SECOND.id, 'C2GENERAL', SECOND.bot.userId);
    expect(own.answer).toMatchObject({ outcome: 'accepted', thread: `slack:C1HOME:${own.ts}` });
    expect(second.answer).toMatchObject({
      outcome: 'accepted',
      thread: `slack:TSECOND:C2GENERAL:${second.ts}`,
    });

    const ownReply = await replied(stack, 'C1HOME', own.reply);
    const secondReply = await replied(stack, 'C2GENERAL', second.reply);
    expect([ownReply.account, ownReply.status]).toEqual([FAKE_SLACK_TEAM, 200]);
    expect([secondReply.account, secondReply.status]).toEqual([SECOND.id, 200]);
    expect(secondReply.body).toMatchObject({ thread_ts: second.ts });
    // Every call about the second team's channel went with its token, and none was refused.
    const aboutSecond = stack.api
      .calls()
      .filter(
        (call) => call.platform === 'slack' && (call.body as { channel?: string })?.channel === 'C2GENERAL',
      );
    expect(new Set(aboutSecond.map((call) => `${call.account} ${call.status}`))).toEqual(
      new Set(['TSECOND 200']),
    );
    expect(aboutSecond.map((call) => call.method)).toContain('reactions.add');
  });

  it("ignores the second team's bot talking, and a mention of the first team's bot there addresses nobody", async () => {
    seq += 1;
    const ts = `1700800000.${String(seq).padStart(6, '0')}`;
    const ours = JSON.stringify({
      type: 'event_callback',
      team_id: SECOND.id,
      event_id: `EvTeams${seq}`,
      event: { type: 'message', channel: 'C2GENERAL', user: SECOND.bot.userId, text: 'our own reply', ts },
    });
    expect((await postSlackEvent(stack, ours)).body).toMatchObject({ outcome: 'ignored' });
    const elsewhere = await say(stack, SECOND.id, 'C2GENERAL', 'UBOT');
    expect(elsewhere.answer).toMatchObject({ outcome: 'ignored', reason: 'not-addressed' });
  });
});

describe('an upgrade to several teams', () => {
  it("keeps the key of a thread the deployment's own team started before", { timeout: 60_000 }, async () => {
    const prefix = uniquePrefix('teams-upgrade');
    const env = { REDIS_PREFIX: prefix, ADMIN_TOKENS: `ops:read:${ADMIN}` };
    const before = await startStack(env, redis);
    const root = await say(before, FAKE_SLACK_TEAM, 'C1UPGRADE', 'UBOT');
    expect(root.answer).toMatchObject({ outcome: 'accepted', thread: `slack:C1UPGRADE:${root.ts}` });
    await replied(before, 'C1UPGRADE', root.reply);
    await before.close();

    // The same Redis, now with a second team's token.
    const after = await startStack(
      { ...env, SLACK_TEAM_TOKENS_DIR: tokensDir },
      redis,
      {},
      { slackTeams: [SECOND] },
    );
    try {
      const followUp = await say(after, FAKE_SLACK_TEAM, 'C1UPGRADE', 'UBOT', root.ts);
      expect(followUp.answer).toMatchObject({ outcome: 'accepted', thread: `slack:C1UPGRADE:${root.ts}` });
      const reply = await replied(after, 'C1UPGRADE', followUp.reply);
      expect(reply.body).toMatchObject({ thread_ts: root.ts });
      const report = await fetch(
        `${after.ingress.adminUrl}/admin/threads/${encodeURIComponent(`slack:C1UPGRADE:${root.ts}`)}`,
        { headers: { authorization: `Bearer ${ADMIN}` } },
      );
      // One conversation: both turns are in the history of the one key.
      const { history } = (await report.json()) as { history: unknown[] };
      expect(history).toHaveLength(2);
    } finally {
      await after.close();
    }
  });
});
