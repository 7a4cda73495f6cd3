import { createHmac } from 'node:crypto';
import { type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../src/gateway/client.js';
import { PlatformApiError } from '../src/outbound.js';
import { expectWaitedAtLeast, FAST_RETRY } from './outbound-fixture.js';

const SECRET = 'gateway-s3cret';
let fake: FakePlatformApi;
let gateway: GatewayClient;

beforeAll(async () => {
  fake = await startFakePlatformApi({ gatewaySecret: SECRET });
  gateway = new GatewayClient({ replyUrl: fake.urls.gatewayReply, secret: SECRET, retry: FAST_RETRY });
});
afterAll(() => fake.close());

async function callsOf(run: () => Promise<unknown>) {
  const before = fake.calls().length;
  await run();
  return fake.calls().slice(before);
}

const target = {
  platform: 'telegram',
  channelId: '-1001',
  threadId: '7',
  messageId: '42',
  replyRef: 'evt_9',
};

describe('gateway client against the fake reply receiver', () => {
  it('reacts through the protocol commands, on the upstream message, signed', async () => {
    const message = { platform: 'telegram', channelId: '-1001', threadId: '7', messageId: '42' };
    const calls = await callsOf(async () => {
      await gateway.react(message, 'accepted');
      await gateway.unreact(message, 'working');
    });
    expect(calls.map((c) => [c.method, c.status])).toEqual([
      ['add_reaction', 200],
      ['remove_reaction', 200],
    ]);
    expect(calls[0]!.body).toMatchObject({
      schema: 'openab.gateway.reply.v1',
      reply_to: '42',
      platform: 'telegram',
      channel: { id: '-1001', thread_id: '7' },
      content: { type: 'text', text: '👀' },
      command: 'add_reaction',
    });
    expect((calls[1]!.body as { content: { text: string } }).content.text).toBe('⚙️');
  });

  it('posts openab.gateway.reply.v1, signed, naming the event and quoting the message', async () => {
    const calls = await callsOf(async () => {
      const replyId = await gateway.send(target, 'done', { idempotencyKey: '00d1a2b3c4000401:reply' });
      expect(replyId).toBe('00d1a2b3c4000401:reply');
    });
    const [call] = calls;
    expect(call).toMatchObject({ method: 'reply', status: 200 });
    expect(call!.body).toStrictEqual({
      schema: 'openab.gateway.reply.v1',
      reply_to: 'evt_9',
      platform: 'telegram',
      channel: { id: '-1001', thread_id: '7' },
      content: { type: 'text', text: 'done' },
      request_id: '00d1a2b3c4000401:reply',
      quote_message_id: '42',
    });
    expect(call!.headers['idempotency-key']).toBe('00d1a2b3c4000401:reply');
  });

  it('signs each post as ingress wants events signed: a timestamp of now, and the HMAC over it and the body', async () => {
    const calls = await callsOf(async () => {
      await gateway.send(target, 'signed');
      await gateway.react(target, 'accepted');
    });
    for (const call of calls) {
      const timestamp = call.headers['x-tributary-timestamp']!;
      expect(timestamp).toMatch(/^\d+$/);
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
      const signed = `v1:${timestamp}:${JSON.stringify(call.body)}`;
      const expected = createHmac('sha256', SECRET).update(signed).digest('hex');
      expect(call.headers['x-tributary-signature']).toBe(`v1=${expected}`);
    }
  });

  it('names the message when the delivery id is unknown, makes up a request id, omits the thread', async () => {
    const calls = await callsOf(async () => {
      const replyId = await gateway.send({ platform: 'line', channelId: 'U1', messageId: 'm-3' }, 'ok');
      expect(replyId).toMatch(/^[0-9a-f-]{36}$/);
    });
    expect(calls[0]!.body).toStrictEqual({
      schema: 'openab.gateway.reply.v1',
      reply_to: 'm-3',
      platform: 'line',
      channel: { id: 'U1' },
      content: { type: 'text', text: 'ok' },
      request_id: calls[0]!.headers['idempotency-key'],
      quote_message_id: 'm-3',
    });
  });

  it('retries a 5xx with the same body and key', async () => {
    fake.failNext({ platform: 'gateway', status: 503 });
    const calls = await callsOf(() => gateway.send(target, 'again', { idempotencyKey: 'b:reply' }));
    expect(calls.map((call) => call.status)).toEqual([503, 200]);
    expect(calls[1]!.body).toEqual(calls[0]!.body);
    expect(calls[1]!.headers['idempotency-key']).toBe('b:reply');
  });

  it('honours Retry-After of a 429', async () => {
    fake.failNext({ platform: 'gateway', status: 429, retryAfterSeconds: 1 });
    const calls = await callsOf(() => gateway.send(target, 'later'));
    expectWaitedAtLeast(calls, 1000);
  });

  it('names GATEWAY_SECRET when the receiver refuses the signature, without the secret', async () => {
    const wrong = new GatewayClient({
      replyUrl: fake.urls.gatewayReply,
      secret: 'not-the-secret',
      retry: FAST_RETRY,
    });
    const error = await wrong.send(target, 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 401 });
    expect((error as Error).message).toBe(
      'gateway reply failed (401): HTTP 401: invalid signature; check that GATEWAY_SECRET matches the secret the gateway verifies with',
    );
  });
});
