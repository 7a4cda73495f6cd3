import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakePlatformApi, startFakePlatformApi } from '../src/index.js';

let fake: FakePlatformApi;
beforeAll(async () => {
  fake = await startFakePlatformApi({ gatewaySecret: 'gw-secret' });
});
afterAll(() => fake.close());

async function call(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

function json(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

const slackAuth = () => ({ authorization: `Bearer ${fake.tokens.slack}` });
const discordAuth = () => ({ authorization: `Bot ${fake.tokens.discord}` });

describe('fake platform API: Slack', () => {
  it('posts, threads and lists replies in Slack shapes, with generated ts', async () => {
    fake.seedMessage({
      platform: 'slack',
      channelId: 'C1',
      messageId: '1700000000.000100',
      senderId: 'U1',
      text: 'root',
    });
    const posted = await call(
      `${fake.urls.slack}/chat.postMessage`,
      json({ channel: 'C1', thread_ts: '1700000000.000100', text: 'hi' }, slackAuth()),
    );
    expect(posted.body).toMatchObject({ ok: true, channel: 'C1', ts: expect.stringMatching(/^\d+\.\d{6}$/) });
    const replies = await call(`${fake.urls.slack}/conversations.replies?channel=C1&ts=1700000000.000100`, {
      headers: slackAuth(),
    });
    expect(replies.body.messages.map((m: { text: string }) => m.text)).toEqual(['root', 'hi']);
  });

  it('answers a wrong token like Slack: HTTP 200 with ok:false invalid_auth', async () => {
    const answer = await call(`${fake.urls.slack}/chat.postMessage`, json({ channel: 'C1', text: 'x' }));
    expect(answer).toMatchObject({ status: 200, body: { ok: false, error: 'invalid_auth' } });
  });

  it('answers repeated reactions the way Slack does', async () => {
    const args = { channel: 'C1', timestamp: '1.2', name: 'eyes' };
    const add = () => call(`${fake.urls.slack}/reactions.add`, json(args, slackAuth()));
    expect((await add()).body).toEqual({ ok: true });
    expect((await add()).body).toEqual({ ok: false, error: 'already_reacted' });
  });

  it('simulates a 429 with Retry-After, then answers normally', async () => {
    fake.failNext({ platform: 'slack', method: 'chat.postMessage', status: 429, retryAfterSeconds: 3 });
    const limited = await call(
      `${fake.urls.slack}/chat.postMessage`,
      json({ channel: 'C1', text: 'x' }, slackAuth()),
    );
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.body).toEqual({ ok: false, error: 'ratelimited' });
    const next = await call(
      `${fake.urls.slack}/chat.postMessage`,
      json({ channel: 'C1', text: 'x' }, slackAuth()),
    );
    expect(next.body.ok).toBe(true);
  });
});

describe('fake platform API: Telegram', () => {
  const method = (name: string, token = fake.tokens.telegram) => `${fake.urls.telegram}/bot${token}/${name}`;

  it('sends and edits in Bot API shapes; an unchanged edit is refused as Telegram does', async () => {
    const sent = await call(method('sendMessage'), json({ chat_id: -100123, text: 'hello' }));
    expect(sent.body).toMatchObject({ ok: true, result: { message_id: expect.any(Number), text: 'hello' } });
    const edit = (text: string) =>
      call(
        method('editMessageText'),
        json({ chat_id: -100123, message_id: sent.body.result.message_id, text }),
      );
    expect((await edit('hello!')).body.ok).toBe(true);
    expect(await edit('hello!')).toMatchObject({
      status: 400,
      body: { ok: false, description: expect.stringContaining('message is not modified') },
    });
  });

  it('refuses a wrong path token with 401 and never records the token', async () => {
    const answer = await call(method('sendMessage', '42:wrong'), json({ chat_id: 1, text: 'x' }));
    expect(answer).toMatchObject({
      status: 401,
      body: { ok: false, error_code: 401, description: 'Unauthorized' },
    });
    const recorded = JSON.stringify(fake.calls());
    expect(recorded).not.toContain(fake.tokens.telegram);
    expect(recorded).not.toContain('42:wrong');
  });

  it('accepts only emoji from the allowed reaction set, one at a time', async () => {
    const react = (reaction: unknown[]) =>
      call(method('setMessageReaction'), json({ chat_id: 1, message_id: 5, reaction }));
    expect((await react([{ type: 'emoji', emoji: '👀' }])).body).toEqual({ ok: true, result: true });
    expect((await react([{ type: 'emoji', emoji: '✅' }])).body.description).toBe(
      'Bad Request: REACTION_INVALID',
    );
    expect((await react([])).status).toBe(200);
  });

  it('tells a 429 wait in parameters.retry_after, as Telegram does', async () => {
    fake.failNext({ platform: 'telegram', status: 429, retryAfterSeconds: 7 });
    const answer = await call(method('sendMessage'), json({ chat_id: 1, text: 'x' }));
    expect(answer).toMatchObject({
      status: 429,
      body: { ok: false, error_code: 429, parameters: { retry_after: 7 } },
    });
  });
});

describe('fake platform API: Discord', () => {
  it('creates, edits and fetches messages; reactions answer 204', async () => {
    const created = await call(
      `${fake.urls.discord}/channels/111/messages`,
      json({ content: 'hey' }, discordAuth()),
    );
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^\d+$/),
      channel_id: '111',
      content: 'hey',
    });
    const path = `${fake.urls.discord}/channels/111/messages/${created.body.id}`;
    await call(path, {
      method: 'PATCH',
      headers: { ...discordAuth(), 'content-type': 'application/json' },
      body: '{"content":"hey!"}',
    });
    expect((await call(path, { headers: discordAuth() })).body.content).toBe('hey!');
    const reaction = await call(`${path}/reactions/${encodeURIComponent('👀')}/@me`, {
      method: 'PUT',
      headers: discordAuth(),
    });
    expect(reaction.status).toBe(204);
    expect(
      (await call(`${fake.urls.discord}/channels/111/messages/1`, { headers: discordAuth() })).body,
    ).toEqual({
      code: 10008,
      message: 'Unknown Message',
    });
  });

  it('refuses a wrong token with 401 like Discord', async () => {
    const answer = await call(
      `${fake.urls.discord}/channels/1/messages`,
      json({ content: 'x' }, { authorization: 'Bot nope' }),
    );
    expect(answer).toEqual({
      status: 401,
      headers: expect.anything(),
      body: { message: '401: Unauthorized', code: 0 },
    });
  });

  it('tells a 429 wait as a float in the body and whole seconds in the header', async () => {
    fake.failNext({ platform: 'discord', method: 'createMessage', status: 429, retryAfterSeconds: 0.25 });
    const answer = await call(
      `${fake.urls.discord}/channels/1/messages`,
      json({ content: 'x' }, discordAuth()),
    );
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.body).toMatchObject({ retry_after: 0.25, global: false });
  });
});

describe('fake platform API: gateway replies and the call log', () => {
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const sign = (body: string, timestamp = nowSeconds()) => {
    const hmac = createHmac('sha256', 'gw-secret').update(`v1:${timestamp}:${body}`).digest('hex');
    return { 'x-tributary-timestamp': String(timestamp), 'x-tributary-signature': `v1=${hmac}` };
  };

  const reply = {
    schema: 'openab.gateway.reply.v1',
    reply_to: 'evt_1',
    platform: 'telegram',
    channel: { id: '-100', thread_id: null },
    content: { type: 'text', text: 'x' },
    command: null,
    request_id: 'b1:reply',
    quote_message_id: '42',
  };
  const post = (body: string, signature: Record<string, string> = sign(body)) =>
    call(fake.urls.gatewayReply, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signature },
      body,
    });

  it('accepts and records a correctly signed reply and refuses a wrong signature with 401', async () => {
    const body = JSON.stringify(reply);
    const good = await post(body);
    expect(good.status).toBe(200);
    expect(fake.calls().at(-1)).toMatchObject({
      platform: 'gateway',
      method: 'reply',
      status: 200,
      body: reply,
    });
    const bad = await post(body, sign(`${body} `));
    expect(bad).toMatchObject({ status: 401, body: { error: 'invalid signature' } });
  });

  it.each([
    ['unsigned', () => ({})],
    ['signed more than 300 s ago', (body: string) => sign(body, nowSeconds() - 301)],
    ['signed more than 300 s ahead', (body: string) => sign(body, nowSeconds() + 301)],
    [
      'with its timestamp changed after signing',
      (body: string) => ({ ...sign(body, nowSeconds() - 10), 'x-tributary-timestamp': String(nowSeconds()) }),
    ],
    [
      'signed over the body alone',
      (body: string) => ({
        'x-tributary-timestamp': String(nowSeconds()),
        'x-tributary-signature': `sha256=${createHmac('sha256', 'gw-secret').update(body).digest('hex')}`,
      }),
    ],
  ])('refuses a reply %s with 401', async (_label, signature) => {
    const body = JSON.stringify(reply);
    expect(await post(body, signature(body))).toMatchObject({ status: 401 });
  });

  it('tolerates fields the protocol may add, and omitted optional ones', async () => {
    const { schema, reply_to, platform, content } = reply;
    const minimal = { schema, reply_to, platform, channel: { id: 'c' }, content, added: [1] };
    expect((await post(JSON.stringify(minimal))).status).toBe(200);
  });

  it.each([
    ['the old flat shape', { schema: 'openab.gateway.reply.v1', channel_id: 'C', text: 'x' }, 'reply_to'],
    ['another schema', { ...reply, schema: 'openab.gateway.reply.v2' }, 'schema'],
    ['no platform', { ...reply, platform: undefined }, 'platform'],
    ['a channel without id', { ...reply, channel: { thread_id: 't' } }, 'channel.id'],
    ['a non-text content', { ...reply, content: { type: 'image', text: 'x' } }, 'content.type'],
    ['empty text', { ...reply, content: { type: 'text', text: '' } }, 'content.text'],
    ['a numeric request id', { ...reply, request_id: 7 }, 'request_id'],
  ])('refuses %s with 400 naming the field', async (_label, body, field) => {
    const answer = await post(JSON.stringify(body));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(new RegExp(`^${field} `));
  });

  it('fails the next N matching calls with the given 5xx, then recovers', async () => {
    fake.failNext({ platform: 'discord', method: 'getMessage', status: 502, times: 2 });
    const get = () => call(`${fake.urls.discord}/channels/1/messages/2`, { headers: discordAuth() });
    expect([(await get()).status, (await get()).status, (await get()).status]).toEqual([502, 502, 404]);
  });

  it('long-polls /_calls for calls after a sequence number', async () => {
    const { seq } = (await call(`${fake.origin}/_calls`)).body as { seq: number };
    const poll = call(`${fake.origin}/_calls?since=${seq}&waitMs=10000`);
    await call(`${fake.urls.slack}/chat.postMessage`, json({ channel: 'C9', text: 'late' }, slackAuth()));
    const { body } = await poll;
    expect(body.calls).toHaveLength(1);
    expect(body.calls[0]).toMatchObject({
      seq: seq + 1,
      platform: 'slack',
      method: 'chat.postMessage',
      status: 200,
    });
    expect(body.calls[0].headers.authorization).toBe('Bearer [redacted]');
  });

  it('answers an empty long poll when its wait runs out', async () => {
    const { seq } = (await call(`${fake.origin}/_calls`)).body as { seq: number };
    expect((await call(`${fake.origin}/_calls?since=${seq}&waitMs=50`)).body).toEqual({ seq, calls: [] });
  });

  it('waitForCalls resolves on matching calls and names what it saw when it times out', async () => {
    const waiting = fake.waitForCalls(
      (c) =>
        c.platform === 'slack' && c.body !== undefined && (c.body as { channel?: string }).channel === 'C7',
    );
    await call(`${fake.urls.slack}/chat.postMessage`, json({ channel: 'C7', text: 'x' }, slackAuth()));
    expect(await waiting).toHaveLength(1);
    await expect(fake.waitForCalls((c) => c.method === 'never', { timeoutMs: 50 })).rejects.toThrow(
      /timed out after 50 ms .* all calls: \[slack chat.postMessage 200/,
    );
  });
});
