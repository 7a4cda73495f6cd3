import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadPlatformConfig } from '@tributary/config';
import { createPlatformClients } from '@tributary/platforms';
import { FAKE_SLACK_TEAM, type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverBotIdentities } from '../src/bot-identities.js';

const SECOND = {
  id: 'TSECOND',
  token: 'xoxb-second-team-token',
  bot: { userId: 'USECONDBOT', name: 'second-bot' },
  channels: ['C2GENERAL'],
};

let fake: FakePlatformApi;
const dirs: string[] = [];
beforeAll(async () => {
  fake = await startFakePlatformApi({ slackTeams: [SECOND] });
});
afterAll(async () => {
  await fake.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Ingress's start-up discovery, with a tokens folder holding `files` and `env` over the Slack basics. */
function discover(files: Record<string, string>, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'team-identities-'));
  dirs.push(dir);
  for (const [name, token] of Object.entries(files)) writeFileSync(join(dir, name), token);
  const platforms = loadPlatformConfig({
    SLACK_SIGNING_SECRET: 'secret',
    SLACK_BOT_TOKEN: fake.tokens.slack,
    SLACK_API_URL: fake.urls.slack,
    SLACK_TEAM_TOKENS_DIR: dir,
    ...env,
  });
  return discoverBotIdentities(platforms, createPlatformClients(platforms), pino({ level: 'silent' }));
}

describe("our bot in each Slack team, asked at ingress's start", () => {
  it("finds the deployment's own bot and each further team's, each with its own token", async () => {
    const identities = await discover({ [SECOND.id]: SECOND.token });
    expect(identities.slack).toEqual({ id: fake.bots.slack.userId, name: fake.bots.slack.name });
    expect(identities.slackTeams).toEqual(
      new Map([[SECOND.id, { id: SECOND.bot.userId, name: SECOND.bot.name }]]),
    );
  });

  it('starts with further teams alone, where no team is answered as its own', async () => {
    const identities = await discover({ [SECOND.id]: SECOND.token }, { SLACK_BOT_TOKEN: '' });
    expect(identities.slack).toBeUndefined();
    expect(identities.slackTeams?.get(SECOND.id)).toMatchObject({ id: SECOND.bot.userId });
  });

  it.each([
    [
      "a file for the deployment's own team, whose threads it would re-key",
      { [SECOND.id]: SECOND.token, [FAKE_SLACK_TEAM]: 'xoxb-fake-slack-token' },
      /TFAKE is the team of SLACK_BOT_TOKEN/,
    ],
    [
      "a token filed under another team's id",
      { TTHIRD: SECOND.token },
      /the file TTHIRD holds a token of team TSECOND/,
    ],
    ['a token Slack refuses', { TTHIRD: 'xoxb-nobody' }, /auth.test with the token of team TTHIRD failed/],
  ])('refuses to start on %s', async (_label, files, problem) => {
    const failed = discover(files);
    await expect(failed).rejects.toBeInstanceOf(ConfigError);
    await expect(failed).rejects.toThrow(problem);
  });
});
