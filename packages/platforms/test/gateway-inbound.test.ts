import { createHmac } from 'node:crypto';
import { packBatch, senderContext } from '@tributary/packing';
import { describe, expect, it } from 'vitest';
import { GatewayInboundAdapter, parseGatewayEvent, signedRequestHeaders } from '../src/index.js';
import {
  gateway,
  gatewayEvent,
  inChannel,
  signedGatewayRequest,
  withAttachments,
} from './gateway-inbound-fixtures.js';
import { messageOf, NOW, rejection, webhookRequest } from './support-inbound.js';

const parse = (fields: Record<string, unknown> = {}) =>
  gateway.parse(signedGatewayRequest(gatewayEvent(fields)));

const base64 = (bytes: string | Uint8Array) => Buffer.from(bytes).toString('base64');

describe('gateway verification', () => {
  it('accepts a body signed with the gateway secret', () => {
    expect(gateway.verify(signedGatewayRequest(gatewayEvent()))).toEqual({ ok: true });
  });

  it.each([
    [
      'a changed body',
      (raw: string) => webhookRequest(raw.replace('build', 'built'), signedGatewayRequest(raw).headers),
    ],
    ['another secret', (raw: string) => signedGatewayRequest(raw, 'other')],
    ['no signature', (raw: string) => webhookRequest(raw, {})],
    ['an empty signature', (raw: string) => webhookRequest(raw, { 'x-tributary-signature': '' })],
  ])('rejects %s', (_label, request) => {
    expect(gateway.verify(request(JSON.stringify(gatewayEvent()))).ok).toBe(false);
  });

  const secret = 'gateway-secret-for-tests';
  const minutes = (n: number) => n * 60_000;
  it.each([
    [
      'signed six minutes ago',
      (raw: string) => signedRequestHeaders(secret, raw, NOW - minutes(6)),
      'more than 300 s',
    ],
    [
      'signed six minutes ahead',
      (raw: string) => signedRequestHeaders(secret, raw, NOW + minutes(6)),
      'more than 300 s',
    ],
    [
      'signed in 2001',
      (raw: string) => signedRequestHeaders(secret, raw, Date.UTC(2001, 0, 1)),
      'more than 300 s',
    ],
    [
      'a timestamp changed after signing',
      (raw: string) => ({
        ...signedRequestHeaders(secret, raw, NOW - minutes(1)),
        'x-tributary-timestamp': String(NOW / 1000),
      }),
      'does not match',
    ],
    [
      'no timestamp (the body-only signature of earlier releases)',
      (raw: string) => ({
        'x-tributary-signature': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`,
      }),
      'missing x-tributary-timestamp header (unix seconds within 300 s of now)',
    ],
    [
      'a timestamp in milliseconds',
      (raw: string) => ({ ...signedRequestHeaders(secret, raw, NOW), 'x-tributary-timestamp': String(NOW) }),
      'x-tributary-timestamp is not unix seconds',
    ],
  ])('rejects a request %s, before parsing it', (_label, headers, reason) => {
    const raw = JSON.stringify(gatewayEvent());
    const verification = gateway.verify(webhookRequest(raw, headers(raw)));
    expect(verification).toEqual({ ok: false, reason: expect.stringContaining(reason) });
  });

  it('accepts a request signed up to five minutes either side of now', () => {
    const raw = JSON.stringify(gatewayEvent());
    for (const skew of [-minutes(5), minutes(5)]) {
      expect(gateway.verify(webhookRequest(raw, signedRequestHeaders(secret, raw, NOW + skew)))).toEqual({
        ok: true,
      });
    }
  });

  it('refuses to be built with an empty secret', () => {
    expect(() => new GatewayInboundAdapter({ secret: '' })).toThrow('secret');
  });
});

describe('gateway parse', () => {
  it('turns a message event into an ArrivalEvent of the upstream platform, keyed by its message id', () => {
    expect(messageOf(parse())).toStrictEqual({
      event: {
        eventId: 'm-1',
        platform: 'line',
        channelId: 'Uroom1',
        sender: { id: 'Ualice', name: 'alice', displayName: 'Alice Liddell', isBot: false },
        timestamp: '2025-01-01T09:30:00.000Z',
        text: 'check the build',
        attachments: [],
        replyRef: 'evt_1',
      },
      thread: 'gateway:line:Uroom1:Uroom1',
      idempotencyKey: 'gateway:line:Uroom1:m-1',
      mentions: [],
      ref: { platform: 'line', channelId: 'Uroom1', messageId: 'm-1', replyRef: 'evt_1' },
      direct: true,
    });
  });

  it('dedups a redelivery by message_id although the gateway minted a new event_id', () => {
    const first = messageOf(parse({ event_id: 'evt_a' }));
    const again = messageOf(parse({ event_id: 'evt_b' }));
    expect(again.idempotencyKey).toBe(first.idempotencyKey);
    expect(again.event.eventId).toBe(first.event.eventId);
    expect([first.event.replyRef, again.event.replyRef]).toEqual(['evt_a', 'evt_b']);
    expect(messageOf(parse({ message_id: 'm-2' })).idempotencyKey).not.toBe(first.idempotencyKey);
  });

  it('never shows the delivery id to the agent', () => {
    const { replyRef, ...withoutRef } = messageOf(parse()).event;
    expect(replyRef).toBe('evt_1');
    const caps = { image: true, audio: true, embeddedContext: true };
    const packed = JSON.stringify(packBatch([{ ...withoutRef, replyRef }], caps));
    expect(packed).toBe(JSON.stringify(packBatch([withoutRef], caps)));
    expect(packed).not.toContain('evt_1');
    expect(senderContext({ ...withoutRef, replyRef })).toStrictEqual(senderContext(withoutRef));
  });

  it('keeps threads of one channel apart, and treats a null thread_id as none', () => {
    const inThread = messageOf(parse(inChannel('Uroom1', 't-9')));
    expect(inThread.thread).toBe('gateway:line:Uroom1:t-9');
    expect(inThread.event.threadId).toBe('t-9');
    expect(inThread.ref.threadId).toBe('t-9');
    const unthreaded = messageOf(parse(inChannel('Uroom1', null)));
    expect(unthreaded.thread).toBe('gateway:line:Uroom1:Uroom1');
    expect(unthreaded.event).not.toHaveProperty('threadId');
  });

  it('escapes ids containing ":" so different conversations never share a key', () => {
    const a = messageOf(parse({ platform: 'matrix', ...inChannel('!room:example.org', 'x') }));
    const b = messageOf(parse({ platform: 'matrix', ...inChannel('!room', 'example.org:x') }));
    expect(a.thread).toBe('gateway:matrix:!room%3Aexample.org:x');
    expect(a.thread).not.toBe(b.thread);
    expect(messageOf(parse({ message_id: '1:2%3' })).idempotencyKey).toBe('gateway:line:Uroom1:1%3A2%253');
  });

  it('normalises the timestamp to UTC milliseconds', () => {
    expect(messageOf(parse({ timestamp: '2025-01-01T17:30:00.25+08:00' })).event.timestamp).toBe(
      '2025-01-01T09:30:00.250Z',
    );
  });

  it('keeps the text verbatim and the mentions', () => {
    const message = messageOf(
      parse({ content: { type: 'text', text: '  <@Ubot>\n run *it*  ' }, mentions: ['Ubot', 'Ubob'] }),
    );
    expect(message.event.text).toBe('  <@Ubot>\n run *it*  ');
    expect(message.mentions).toEqual(['Ubot', 'Ubob']);
    expect(messageOf(parse({ mentions: undefined })).mentions).toEqual([]);
  });

  it('takes inline attachments as content, in order', () => {
    const message = messageOf(
      parse(
        withAttachments(
          { type: 'image', filename: 'shot.png', mime_type: 'image/png', data: 'iVBORw0KGgo=', size: 8 },
          { type: 'audio', filename: 'voice.ogg', mime_type: 'audio/ogg', data: 'T2dnUw==', size: 4 },
          {
            type: 'text_file',
            filename: 'build.log',
            mime_type: 'text/plain',
            data: base64('FAILED: step 3 — 日本\n'),
            size: 26,
          },
        ),
      ),
    );
    expect(message.event.text).toBe('see attached');
    expect(message.event.attachments).toStrictEqual([
      { kind: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=', name: 'shot.png' },
      { kind: 'audio', mimeType: 'audio/ogg', data: 'T2dnUw==', name: 'voice.ogg' },
      { kind: 'text', name: 'build.log', mimeType: 'text/plain', text: 'FAILED: step 3 — 日本\n' },
    ]);
  });

  it('passes by reference what is not inline, not delivered or not UTF-8 text', () => {
    const message = messageOf(
      parse(
        withAttachments(
          { type: 'image', filename: 'big photo.jpg', mime_type: 'image/jpeg', data: '', size: 9e6 },
          { type: 'audio', filename: 'a/b.ogg', mime_type: 'audio/ogg', size: 10, path: '/var/gw/b.ogg' },
          {
            type: 'image',
            filename: 'huge.png',
            mime_type: 'image/png',
            data: 'iVBORw0KGgo=',
            size: 8,
            status: 'skipped: over the size limit',
          },
          {
            type: 'text_file',
            filename: 'blob.bin',
            mime_type: 'text/plain',
            data: base64(new Uint8Array([0xff, 0xfe, 0])),
            size: 3,
          },
          { type: 'video', filename: 'clip.mp4', mime_type: 'video/mp4', data: 'AAAA', size: 3 },
          { type: 'image', filename: '', mime_type: '', size: 0, status: 'download failed' },
        ),
      ),
    );
    expect(message.event.attachments).toStrictEqual([
      {
        kind: 'link',
        uri: 'tributary://gateway/attachment/big%20photo.jpg',
        name: 'big photo.jpg',
        mimeType: 'image/jpeg',
      },
      {
        kind: 'link',
        uri: 'tributary://gateway/attachment/a%2Fb.ogg',
        name: 'a/b.ogg',
        mimeType: 'audio/ogg',
      },
      {
        kind: 'link',
        uri: 'tributary://gateway/attachment/huge.png',
        name: 'huge.png',
        mimeType: 'image/png',
      },
      {
        kind: 'link',
        uri: 'tributary://gateway/attachment/blob.bin',
        name: 'blob.bin',
        mimeType: 'text/plain',
      },
      {
        kind: 'link',
        uri: 'tributary://gateway/attachment/clip.mp4',
        name: 'clip.mp4',
        mimeType: 'video/mp4',
      },
      { kind: 'link', uri: 'tributary://gateway/attachment/image-5', name: 'image-5' },
    ]);
    // The gateway's reason and path are for its operators, not part of what the user sent.
    expect(JSON.stringify(message.event)).not.toMatch(/skipped|failed|\/var\/gw/);
  });

  it('ignores event types other than message, whatever else they carry', () => {
    expect(
      gateway.parse(signedGatewayRequest({ schema: 'openab.gateway.event.v1', event_type: 'reaction' })),
    ).toEqual({ kind: 'ignored', reason: "gateway event_type 'reaction'" });
  });

  it('tolerates fields the protocol may add, and parseGatewayEvent keeps only the known ones', () => {
    const attachment = { type: 'image', filename: 'a', mime_type: 'image/png', size: 1 };
    const event = gatewayEvent(withAttachments(attachment));
    const extended = {
      ...event,
      proactive: true,
      injected: { deep: 1 },
      channel: { ...event.channel, topic: 'x' },
      sender: { ...event.sender, role: 'admin' },
      content: { ...withAttachments({ ...attachment, width: 3 }).content, markup: 'md' },
    };
    expect(parseGatewayEvent(extended)).toStrictEqual(event);
    expect(messageOf(gateway.parse(signedGatewayRequest(extended))).event).toStrictEqual(
      messageOf(gateway.parse(signedGatewayRequest(event))).event,
    );
  });

  const image = { type: 'image', filename: 'a.png', mime_type: 'image/png', size: 1 };
  it.each([
    [
      'another schema',
      gatewayEvent({ schema: 'openab.gateway.event.v2' }),
      'schema must be openab.gateway.event.v1',
    ],
    ['no event type', gatewayEvent({ event_type: undefined }), 'event_type is missing'],
    ['a missing message id', gatewayEvent({ message_id: undefined }), 'message_id is missing'],
    ['a missing event id', gatewayEvent({ event_id: undefined }), 'event_id is missing'],
    ['an empty platform', gatewayEvent({ platform: '' }), 'platform must not be empty'],
    ['a flat channel', gatewayEvent({ channel: 'line' }), 'channel must be a JSON object'],
    ['an empty thread id', gatewayEvent(inChannel('c', '')), 'channel.thread_id must not be empty'],
    [
      'a sender without is_bot',
      gatewayEvent({ sender: { id: 'u', name: 'u', display_name: 'u' } }),
      'sender.is_bot is missing',
    ],
    [
      'a local timestamp',
      gatewayEvent({ timestamp: '2025-01-01 09:30' }),
      'timestamp must be an RFC 3339 time',
    ],
    ['content without text', gatewayEvent({ content: { type: 'text' } }), 'content.text is missing'],
    [
      'an attachment without size',
      gatewayEvent(withAttachments({ ...image, size: undefined })),
      'content.attachments[0].size is missing',
    ],
    [
      'image data that is not base64',
      gatewayEvent(withAttachments({ ...image, data: '!' })),
      'attachments[0].data',
    ],
    [
      'text file data that is not base64',
      gatewayEvent(withAttachments({ ...image, type: 'text_file', mime_type: 'text/plain', data: 'a b!' })),
      'content.attachments[0].data must be base64',
    ],
    ['mentions that are not strings', gatewayEvent({ mentions: [1] }), 'mentions[0] must be a string'],
    [
      'a lone surrogate',
      gatewayEvent({ content: { type: 'text', text: '\ud800' } }),
      'content.text must be well-formed',
    ],
  ])('rejects %s, naming the field', (_label, body, problem) => {
    expect(rejection(() => gateway.parse(signedGatewayRequest(body))).message).toContain(problem);
  });

  it.each([
    ['<@Ubot> check', 'check'],
    ['check <@Ubot>', 'check'],
    ['<@Ubob> check', '<@Ubob> check'],
  ])('stripSelfMention(%j) = %j', (text, stripped) => {
    expect(gateway.stripSelfMention(text, 'Ubot')).toBe(stripped);
  });
});

describe('a gateway approval event', () => {
  const approval = (data: string) =>
    gatewayEvent({
      event_type: 'approval',
      approval: { data },
      message_id: 'approval-Zm9v',
      content: undefined,
    });

  it('is a click on the request its message_id names, answered in the HTTP response', () => {
    const inbound = parse({
      event_type: 'approval',
      approval: { data: 'ap:Zm9v:3' },
      message_id: 'approval-Zm9v',
    });
    expect(inbound).toMatchObject({ kind: 'approval', approvalId: 'Zm9v', option: 3, privately: true });
    expect(inbound).toMatchObject({ ref: { messageId: 'approval-Zm9v' } });
    if (inbound.kind !== 'approval') throw new Error('not an approval');
    expect(inbound.respond('No.')).toEqual({ ok: true, outcome: 'approval', answer: 'No.' });
    expect(inbound.respond(undefined)).toEqual({ ok: true, outcome: 'approval' });
  });

  it('refuses data that names no request', () => {
    expect(() => gateway.parse(signedGatewayRequest(approval('vote:1')))).toThrow(
      'approval.data is not the data of a request button',
    );
  });
});
