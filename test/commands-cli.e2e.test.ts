import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { THREAD_COMMANDS } from '@tributary/platforms';
import { type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandText } from '../apps/ingress/src/control-commands.js';

const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));

let api: FakePlatformApi;
beforeAll(async () => {
  api = await startFakePlatformApi();
});
afterAll(() => api.close());

async function tributary(env: Record<string, string>, ...args: string[]) {
  const child = spawn(process.execPath, [bin, 'commands', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

describe('tributary commands', () => {
  it('registers every thread command with Discord and Telegram, under names ingress reads back', async () => {
    const run = await tributary(
      {
        DISCORD_BOT_TOKEN: api.tokens.discord,
        DISCORD_API_URL: api.urls.discord,
        TELEGRAM_BOT_TOKEN: api.tokens.telegram,
        TELEGRAM_API_URL: api.urls.telegram,
      },
      'register',
    );
    expect(run.stdout).toContain(`✓ Discord: registered /cancel, /cancel-all, /reset, /status, /help`);
    expect(run.stdout).toContain('✓ Telegram: set the bot');
    expect(run.code).toBe(0);
    const [discord] = api.calls().filter((call) => call.method === 'bulkOverwriteGlobalApplicationCommands');
    expect(discord).toMatchObject({ status: 200, path: `/applications/${api.bots.discord.id}/commands` });
    expect((discord!.body as { name: string; type: number }[]).map(({ name, type }) => [name, type])).toEqual(
      THREAD_COMMANDS.map((name) => [name, 1]),
    );
    const [telegram] = api.calls().filter((call) => call.method === 'setMyCommands');
    expect(telegram!.status).toBe(200);
    const listed = (telegram!.body as { commands: { command: string }[] }).commands.map((c) => c.command);
    // Each name Telegram offers comes back to ingress as the command it stands for.
    expect(listed.map((name) => parseCommandText(`/${name}`, undefined))).toEqual([...THREAD_COMMANDS]);
  });

  it('says which platform refused and exits 1, the token never shown', async () => {
    const run = await tributary(
      { DISCORD_BOT_TOKEN: 'not-the-token-0123456789', DISCORD_API_URL: api.urls.discord },
      'register',
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('✗ Discord:');
    expect(run.stdout).toContain('DISCORD_BOT_TOKEN');
    expect(run.stdout).toContain('– Telegram: TELEGRAM_BOT_TOKEN is not set; skipped');
    expect(run.stdout + run.stderr).not.toContain('not-the-token-0123456789');
  });

  it('prints the Slack manifest part routing /tributary and the events to ingress', async () => {
    const run = await tributary({}, 'slack-manifest', '--url', 'https://tributary.example/');
    expect(run.code).toBe(0);
    const manifest = JSON.parse(run.stdout);
    expect(manifest.features.slash_commands).toEqual([
      expect.objectContaining({
        command: '/tributary',
        url: 'https://tributary.example/webhooks/slack/commands',
        usage_hint: 'cancel | cancel-all | reset | status | help',
      }),
    ]);
    expect(manifest.settings.event_subscriptions.request_url).toBe(
      'https://tributary.example/webhooks/slack',
    );
    expect(manifest.settings.interactivity).toEqual({
      is_enabled: true,
      request_url: 'https://tributary.example/webhooks/slack/interactivity',
    });
    expect((await tributary({}, 'slack-manifest')).code).toBe(2);
  });
});
