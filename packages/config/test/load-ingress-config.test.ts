import { describe, expect, it } from 'vitest';
import { loadIngressConfig } from '../src/ingress-config.js';
import { loadPlatformConfig } from '../src/platform-config.js';

describe('loadIngressConfig', () => {
  it('has working defaults and no platform on', () => {
    const config = loadIngressConfig({});
    expect(config).toMatchObject({
      port: 8080,
      redisUrl: 'redis://127.0.0.1:6379',
      redisTimeoutMs: 1000,
      trustProxy: false,
    });
    expect(config.gates).toMatchObject({
      allowBotMessages: 'off',
      allowUserMessages: 'involved',
      maxBotTurns: 10,
    });
    expect(config.platforms).toEqual({
      slack: undefined,
      telegram: undefined,
      discord: undefined,
      gateway: undefined,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it.each([
    [{}, false],
    [{ TRUST_PROXY: 'off' }, false],
    [{ TRUST_PROXY: 'on' }, true],
    [{ TRUST_PROXY: '2' }, 2],
    [
      { TRUST_PROXY: '10.0.0.0/8, fd00::/8,192.168.1.7,loopback' },
      ['10.0.0.0/8', 'fd00::/8', '192.168.1.7', 'loopback'],
    ],
  ])('reads TRUST_PROXY %j as %j', (env, trustProxy) => {
    expect(loadIngressConfig(env).trustProxy).toEqual(trustProxy);
  });

  it.each([
    [{}, 'auto'],
    [{ REDIS_ACK_REPLICAS: 'auto' }, 'auto'],
    [{ REDIS_ACK_REPLICAS: '0' }, 0],
    [{ REDIS_ACK_REPLICAS: '2' }, 2],
  ])('reads REDIS_ACK_REPLICAS %j as %j: a replica confirms by default, 0 opts out', (env, ackReplicas) => {
    expect(loadIngressConfig(env).ackReplicas).toBe(ackReplicas);
  });

  it('reads APPROVERS: users, roles the click carries, and groups the platform keeps', () => {
    const approvers = 'slack:U1, discord:role:42,slack:group:S0ABC, telegram:group:admins';
    expect(loadIngressConfig({ APPROVERS: approvers }).approvers).toEqual([
      'slack:U1',
      'discord:role:42',
      'slack:group:S0ABC',
      'telegram:group:admins',
    ]);
  });

  it('reads lists and policies', () => {
    const config = loadIngressConfig({ TRUSTED_BOT_IDS: ' B1, B2 ,', ALLOW_BOT_MESSAGES: 'mentions' });
    expect(config.gates.trustedBotIds).toEqual(['B1', 'B2']);
    expect(config.gates.allowBotMessages).toBe('mentions');
  });

  it.each([
    [{ PORT: '80a' }, 'PORT'],
    [{ ALLOW_USER_MESSAGES: 'everyone' }, 'ALLOW_USER_MESSAGES'],
    [{ REDIS_TIMEOUT_MS: '10000' }, 'REDIS_TIMEOUT_MS'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ DISCORD_PUBLIC_KEY: 'not-hex' }, 'DISCORD_PUBLIC_KEY'],
    [{ TELEGRAM_SECRET_TOKEN: 'has spaces' }, 'TELEGRAM_SECRET_TOKEN'],
    [{ SLACK_API_URL: 'ftp://x' }, 'SLACK_API_URL'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/8,' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0' }, 'TRUST_PROXY'],
    [{ REDIS_ACK_REPLICAS: 'some' }, 'REDIS_ACK_REPLICAS'],
    [{ REDIS_ACK_TIMEOUT_MS: '1000' }, 'REDIS_ACK_TIMEOUT_MS'],
    [{ REDIS_TIMEOUT_MS: '200', REDIS_ACK_TIMEOUT_MS: '250' }, 'REDIS_ACK_TIMEOUT_MS'],
    [{ APPROVERS: 'discord:group:ops' }, 'APPROVERS'],
    [{ APPROVERS: 'telegram:group:moderators' }, 'APPROVERS'],
    [{ APPROVERS: 'slack:group:' }, 'APPROVERS'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadIngressConfig(env)).toThrow(name);
  });
});

describe('loadPlatformConfig', () => {
  it('turns a platform on by any of its variables, with the public API base by default', () => {
    const platforms = loadPlatformConfig({ SLACK_BOT_TOKEN: 'xoxb-1', GATEWAY_REPLY_URL: 'http://gw/reply' });
    expect(platforms.slack).toMatchObject({ botToken: 'xoxb-1', signingSecret: undefined });
    expect(platforms.slack?.apiUrl).toMatch(/^https:\/\//);
    expect(platforms.gateway).toEqual({ secret: undefined, replyUrl: 'http://gw/reply' });
    expect(platforms.telegram).toBeUndefined();
  });
});
