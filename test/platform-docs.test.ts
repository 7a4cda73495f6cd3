import { readFileSync } from 'node:fs';
import { loadPlatformConfig, variablesRead } from '@tributary/config';
import { TELEGRAM_UPDATES, THREAD_COMMANDS } from '@tributary/platforms';
import { describe, expect, it } from 'vitest';
import { webhookDefinitions } from '../apps/ingress/src/webhook-definitions.js';

/** Every platform on, so that every route exists. */
const platforms = loadPlatformConfig({
  SLACK_SIGNING_SECRET: 'docs-slack-signing-secret',
  TELEGRAM_SECRET_TOKEN: 'docs-telegram-secret',
  DISCORD_PUBLIC_KEY: 'a'.repeat(64),
  DISCORD_FORWARDER_SECRET: 'docs-forwarder-secret',
  GATEWAY_SECRET: 'docs-gateway-secret',
});

const PAGES = ['slack', 'telegram', 'discord', 'gateway'] as const;
const page = (platform: string) =>
  readFileSync(new URL(`../docs/platforms/${platform}.md`, import.meta.url), 'utf8');

describe('a page per platform, in step with the routes', () => {
  it('names every webhook route of its platform', () => {
    const routes = webhookDefinitions(platforms);
    expect(new Set(routes.map((route) => route.platform))).toEqual(new Set(PAGES));
    for (const route of routes) expect(page(route.platform), route.path).toContain(`/${route.path.slice(1)}`);
  });

  it('names every variable of its platform', () => {
    const read = [...variablesRead(loadPlatformConfig)];
    for (const platform of PAGES) {
      const own = read.filter((name) => name.startsWith(`${platform.toUpperCase()}_`));
      expect(own.length).toBeGreaterThan(0);
      for (const name of own) expect(page(platform), name).toContain(`\`${name}\``);
    }
  });

  it("has Telegram send every update ingress reads, a button's click among them", () => {
    const allowed = /allowed_updates=(\[[^\]]*\])/.exec(page('telegram'))?.[1];
    expect(allowed, 'the setWebhook call names allowed_updates').toBeDefined();
    expect(new Set(JSON.parse(allowed!))).toEqual(new Set(TELEGRAM_UPDATES));
  });

  it('names every thread command', () => {
    for (const platform of PAGES) {
      for (const command of THREAD_COMMANDS)
        expect(page(platform), `${platform} /${command}`).toContain(command);
    }
  });
});
