import { Writable } from 'node:stream';
import { createMetrics } from '@tributary/observability';
import { TelegramClient } from '@tributary/platforms';
import { Store } from '@tributary/queue';
import { startFakePlatformApi, startRedis, uniquePrefix } from '@tributary/testkit';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ThreadApprovals } from '../src/approvals/thread-approvals.js';
import { RunningTurns } from '../src/turns/running-turns.js';

describe('a permission request while Redis is down', () => {
  it('is answered by the fallback, at warn and counted, never as an error the agent cannot explain', async () => {
    const redis = await startRedis({ private: true });
    const api = await startFakePlatformApi();
    const store = Store.open({
      url: redis.url,
      connection: { kind: 'fail-fast', timeoutMs: 500 },
      queue: { prefix: uniquePrefix('approvals-down') },
    });
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    const metrics = createMetrics();
    const thread = 'telegram:-100:main';
    const running = new RunningTurns();
    running.start(thread, new AbortController(), {
      batchId: '0000000000000001',
      fence: 1,
      target: { platform: 'telegram', channelId: '-100', messageId: '7' },
    });
    const clients = new Map([
      ['telegram', new TelegramClient({ token: api.tokens.telegram, baseUrl: api.urls.telegram })],
    ]);
    const approvals = new ThreadApprovals({
      approvals: store.approvals,
      clients,
      running,
      secrets: { scrub: (text) => text },
      metrics,
      logger,
      timeoutMs: 60_000,
      fallback: 'reject',
    });
    await redis.stop();
    try {
      const outcome = await approvals.ask(
        {
          sessionId: 's1',
          toolCall: { toolCallId: 'call-1', title: 'rm -rf build', kind: 'execute' },
          options: [
            { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
            { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
          ],
        },
        thread,
      );
      expect(outcome).toEqual({ outcome: 'selected', optionId: 'deny' });
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          thread,
          msg: 'permission request could not be put to the thread; the fallback answered it',
        }),
      );
      expect(await metrics.registry.metrics()).toContain(
        'tributary_approval_outcomes_total{platform="telegram",outcome="unavailable"} 1',
      );
      // Nothing was posted: the request never reached the chat.
      expect(api.calls().filter((call) => call.method === 'sendMessage')).toEqual([]);
    } finally {
      store.onConnectionError(() => {});
      await store.close().catch(() => {});
      await api.close();
    }
  });
});
