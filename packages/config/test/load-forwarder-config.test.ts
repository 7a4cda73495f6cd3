import { ConfigError, loadForwarderConfig } from '@tributary/config';
import { describe, expect, it } from 'vitest';

const REQUIRED = { DISCORD_BOT_TOKEN: 'token', DISCORD_FORWARDER_SECRET: 'secret' };

function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    loadForwarderConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('forwarder configuration', () => {
  it('needs only the token and the secret, and defaults the rest', () => {
    expect(loadForwarderConfig(REQUIRED)).toEqual({
      token: 'token',
      secret: 'secret',
      forwardUrl: 'http://127.0.0.1:8080',
      gatewayUrl: undefined,
      apiUrl: undefined,
      logLevel: 'info',
      healthPort: 9464,
      healthHost: '0.0.0.0',
    });
  });

  it('takes every variable it knows', () => {
    const config = loadForwarderConfig({
      ...REQUIRED,
      FORWARD_URL: 'https://ingress.example:8443/tributary',
      DISCORD_GATEWAY_URL: 'ws://127.0.0.1:9000/gateway',
      DISCORD_API_URL: 'http://127.0.0.1:9000/api',
      LOG_LEVEL: 'debug',
      METRICS_PORT: '9000',
      METRICS_HOST: '127.0.0.1',
    });
    expect(config).toMatchObject({
      healthPort: 9000,
      healthHost: '127.0.0.1',
      forwardUrl: 'https://ingress.example:8443/tributary',
      gatewayUrl: 'ws://127.0.0.1:9000/gateway',
      apiUrl: 'http://127.0.0.1:9000/api',
      logLevel: 'debug',
    });
  });

  it('takes DISCORD_API_URL as ingress and workers do, with the version the REST library adds itself', () => {
    const config = loadForwarderConfig({ ...REQUIRED, DISCORD_API_URL: 'http://127.0.0.1:9000/api/v10' });
    expect(config.apiUrl).toBe('http://127.0.0.1:9000/api');
  });

  it.each([
    [{ DISCORD_FORWARDER_SECRET: 's' }, 'DISCORD_BOT_TOKEN', /is required/],
    [{ DISCORD_BOT_TOKEN: 't', DISCORD_FORWARDER_SECRET: '' }, 'DISCORD_FORWARDER_SECRET', /is required/],
    [{ ...REQUIRED, FORWARD_URL: 'ingress:8080' }, 'FORWARD_URL', /must use http: or https:/],
    [{ ...REQUIRED, FORWARD_URL: '/relative' }, 'FORWARD_URL', /absolute URL/],
    [{ ...REQUIRED, DISCORD_GATEWAY_URL: 'http://127.0.0.1:1' }, 'DISCORD_GATEWAY_URL', /ws: or wss:/],
    [{ ...REQUIRED, DISCORD_API_URL: 'ws://127.0.0.1:1' }, 'DISCORD_API_URL', /http: or https:/],
    [{ ...REQUIRED, LOG_LEVEL: 'loud' }, 'LOG_LEVEL', /must be one of/],
  ])('names the bad variable: %j', (env, variable, message) => {
    const error = configErrorOf(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(new RegExp(`^${variable}: `));
    expect(error.message).toMatch(message);
  });
});
