import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/create-metrics.js';
import { platformCallHooks } from '../src/platform-call-counter.js';

describe('what the platform clients report', () => {
  it('a message posted plain after the platform refused its formatting: a warning and a count', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const metrics = createMetrics();
    const hooks = platformCallHooks(metrics, pino(sink));
    hooks.onCall('telegram', 'sendMessage', 400);
    hooks.onPlainFallback('telegram', 'sendMessage', "Bad Request: can't parse entities");

    const exposed = await metrics.registry.metrics();
    expect(exposed).toContain(
      'tributary_platform_plain_fallbacks_total{platform="telegram",method="sendMessage"} 1',
    );
    expect(exposed).toContain(
      'tributary_platform_api_calls_total{platform="telegram",method="sendMessage",status="400"} 1',
    );
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        platform: 'telegram',
        reason: "Bad Request: can't parse entities",
        msg: 'the platform refused the formatted text; it was posted as plain text',
      }),
    ]);
  });
});
