import { GatewayClient, type PlatformClient } from '@tributary/platforms';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LogReplySink } from '../src/replies/log-reply-sink.js';
import type { OutboundMessage } from '../src/replies/outbox.js';

function sinkAt(level: 'info' | 'debug', clients: ReadonlyMap<string, PlatformClient>) {
  const lines: { level: number; msg: string; text?: string }[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { sink: new LogReplySink(logger, clients), lines };
}

const reply = (thread: string): OutboundMessage => ({
  thread,
  batchId: 'b1',
  kind: 'reply',
  text: 'the answer',
  target: { platform: 'telegram', channelId: '-1001', messageId: 'e1' },
});

// The client is never called: the log sink only asks whether the thread's platform has one.
const gateway = new Map<string, PlatformClient>([
  ['gateway', new GatewayClient({ replyUrl: 'http://127.0.0.1:9/reply', secret: 's' })],
]);

describe('the log reply sink', () => {
  it('is the reply path at info where no platform client takes the thread, without the text', async () => {
    const { sink, lines } = sinkAt('info', gateway);
    await sink.send(reply('slack:T1:C1:1.2'));
    expect(lines).toEqual([expect.objectContaining({ level: 30, msg: 'outbound message', chars: 10 })]);
    expect(lines[0]!.text).toBeUndefined();
  });

  it('says nothing at info for a thread a platform client delivered, and everything at debug', async () => {
    const info = sinkAt('info', gateway);
    await info.sink.send(reply('gateway:telegram:-1001:7'));
    expect(info.lines).toEqual([]);
    const debug = sinkAt('debug', gateway);
    await debug.sink.send(reply('gateway:telegram:-1001:7'));
    expect(debug.lines).toEqual([expect.objectContaining({ level: 20, text: 'the answer' })]);
  });
});
