import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { signedRequestHeaders } from '@tributary/platforms';
import { startFakePlatformApi, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, [bin, 'ingress'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { text: '' };
  child.stdout.on('data', (chunk) => {
    output.text += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output.text += chunk;
  });
  return { child, output };
}

describe('tributary ingress (real process)', () => {
  it('accepts a signed message, then drains and exits 0 on SIGTERM without logging its secret', async () => {
    const redis = await startRedis();
    const secret = 'ingress-cli-gateway-secret-77';
    const { child, output } = start({
      REDIS_URL: redis.url,
      REDIS_PREFIX: uniquePrefix('icli'),
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_SECRET: secret,
      LOG_LEVEL: 'debug',
    });
    try {
      // A cold start of the CLI (tsx compiles it) beside the rest of the suite can take this long.
      await waitFor(() => output.text.includes('ingress listening'), {
        what: 'ingress to listen',
        timeoutMs: 40_000,
      });
      const url = /"url":"(http:\/\/[^"]+)"/.exec(output.text)![1]!;
      const body = JSON.stringify({
        schema: 'openab.gateway.event.v1',
        event_id: 'evt-cli',
        timestamp: new Date().toISOString(),
        platform: 'cli',
        event_type: 'message',
        channel: { id: 'c', type: 'thread', thread_id: 't' },
        sender: { id: 'u', name: 'ada', display_name: 'Ada', is_bot: false },
        content: { type: 'text', text: 'hello' },
        mentions: [],
        message_id: 'm-cli',
      });
      const answer = await fetch(`${url}/webhooks/gateway`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedRequestHeaders(secret, body) },
        body,
      });
      expect(answer.status).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);

      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      expect(output.text).toContain('ingress stopped');
      expect(output.text).not.toContain(secret);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await redis.stop();
    }
  }, 60_000);

  it('exits 1 naming the variable when the configuration is bad', async () => {
    const { child, output } = start({ PORT: 'eighty' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output.text).toContain('PORT');
  });

  it.each([
    ['the token is refused', { SLACK_BOT_TOKEN: 'xoxb-revoked' }, 'auth.test could not tell it'],
    ['there is no token', {}, 'there is no SLACK_BOT_TOKEN to ask auth.test with'],
  ])('refuses to start, exit 1, when the Slack bot identity is unset and %s', async (_label, extra, why) => {
    const api = await startFakePlatformApi();
    try {
      const { child, output } = start({
        PORT: '0',
        HOST: '127.0.0.1',
        SLACK_SIGNING_SECRET: 'ingress-cli-slack-secret',
        SLACK_API_URL: api.urls.slack,
        ...extra,
      });
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      expect(output.text).toContain(`configuration error: SLACK_BOT_USER_ID: is unset and ${why}`);
      expect(output.text).toContain('set SLACK_BOT_USER_ID');
    } finally {
      await api.close();
    }
  });
});
