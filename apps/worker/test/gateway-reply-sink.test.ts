import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayReplySink } from '../src/gateway-reply-sink.js';
import type { OutboundMessage } from '../src/outbox.js';

const reply: OutboundMessage = {
  thread: 'gateway:C1:T1',
  batchId: '00d1a2b3c4000401',
  kind: 'reply',
  text: 'done',
  target: { platform: 'gateway', channelId: 'C1', threadId: 'T1', replyToEventId: 'ev-9' },
  stopReason: 'end_turn',
};

let close: (() => void) | undefined;
afterEach(() => close?.());

async function endpoint(status: number) {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () => server.close();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/reply`, received };
}

describe('gateway reply sink', () => {
  it('posts openab.gateway.reply.v1, signed, with the batch id as idempotency key', async () => {
    const { url, received } = await endpoint(200);
    await new GatewayReplySink(url, 's3cret').send(reply);
    const [request] = received;
    expect(JSON.parse(request!.body)).toEqual({
      schema: 'openab.gateway.reply.v1',
      reply_id: '00d1a2b3c4000401:reply',
      kind: 'reply',
      channel: 'gateway',
      channel_id: 'C1',
      thread_id: 'T1',
      reply_to: 'ev-9',
      text: 'done',
      stop_reason: 'end_turn',
    });
    const expected = createHmac('sha256', 's3cret').update(request!.body).digest('hex');
    expect(request!.headers['x-tributary-signature']).toBe(`sha256=${expected}`);
    expect(request!.headers['idempotency-key']).toBe('00d1a2b3c4000401:reply');
  });

  it('fails on a non-2xx answer so the batch is retried', async () => {
    const { url } = await endpoint(503);
    await expect(new GatewayReplySink(url, undefined).send(reply)).rejects.toThrow(/answered 503/);
  });
});
