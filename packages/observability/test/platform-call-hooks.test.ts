import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/create-metrics.js';
import { platformCallHooks } from '../src/platform-call-counter.js';

/** A pino destination that keeps each line, parsed. */
function logLines() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, sink };
}

describe('what the platform clients report', () => {
  it('a message posted plain after the platform refused its formatting: a warning and a count', async () => {
    const { lines, sink } = logLines();
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

  it('a platform that refuses its own streaming: a warning and a count', async () => {
    const { lines, sink } = logLines();
    const metrics = createMetrics();
    platformCallHooks(metrics, pino(sink)).onStreamingRefused('slack', 'Slack error unknown_method');
    expect(await metrics.registry.metrics()).toContain(
      'tributary_platform_streaming_refusals_total{platform="slack"} 1',
    );
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, platform: 'slack', reason: 'Slack error unknown_method' }),
    ]);
  });
});
