import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DiscordInteractionsAdapter } from '../src/index.js';
import {
  CHANNEL,
  interactions,
  signedInteraction,
  slashCommand,
  THREAD,
} from './discord-inbound-fixtures.js';
import { NOW, rejection } from './support-inbound.js';

const ping = { id: '1', application_id: '2', type: 1, token: 't', version: 1 };

describe('Discord interactions verification', () => {
  it('accepts a request signed with the application key', () => {
    expect(interactions.verify(signedInteraction(ping))).toEqual({ ok: true });
  });

  it.each([
    ['a changed body', (r) => ({ ...r, rawBody: Buffer.from(`${r.rawBody} `) }), 'does not match'],
    [
      'a timestamp changed after signing',
      (r) => withHeader(r, 'x-signature-timestamp', String(NOW / 1000 + 1)),
      'does not match',
    ],
    ['a stale timestamp', (r) => ({ ...r, now: NOW + 301_000 }), 'away from now'],
    [
      'no signature header',
      (r) => withHeader(r, 'x-signature-ed25519', undefined),
      'missing x-signature-ed25519',
    ],
    [
      'no timestamp header',
      (r) => withHeader(r, 'x-signature-timestamp', undefined),
      'missing x-signature-timestamp',
    ],
    [
      'a signature that is not hex',
      (r) => withHeader(r, 'x-signature-ed25519', 'zz'.repeat(64)),
      'not 64 bytes of hex',
    ],
    [
      'a short signature',
      (r) => withHeader(r, 'x-signature-ed25519', 'ab'.repeat(32)),
      'not 64 bytes of hex',
    ],
    [
      'a timestamp that is not a number',
      (r) => withHeader(r, 'x-signature-timestamp', 'now'),
      'not unix seconds',
    ],
  ] satisfies [string, (r: Request) => Request, string][])('rejects %s', (_label, change, reason) => {
    const verification = interactions.verify(change(signedInteraction(ping)));
    expect(verification.ok).toBe(false);
    expect(verification.ok === false && verification.reason).toContain(reason);
  });

  it('rejects a request signed with another key', () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    expect(interactions.verify(signedInteraction(ping, other)).ok).toBe(false);
  });

  it.each(['', 'abc', 'zz'.repeat(32), 'ab'.repeat(33)])('refuses the public key %j', (publicKey) => {
    expect(() => new DiscordInteractionsAdapter({ publicKey })).toThrow('publicKey must be 32 bytes of hex');
  });
});

type Request = ReturnType<typeof signedInteraction>;

function withHeader(request: Request, name: string, value: string | undefined): Request {
  return { ...request, headers: { ...request.headers, [name]: value } };
}

describe('Discord interactions parse', () => {
  it('answers PING with PONG', () => {
    expect(interactions.parse(signedInteraction(ping))).toEqual({ kind: 'handshake', body: { type: 1 } });
  });

  it.each(['cancel', 'cancel-all', 'reset'] as const)(
    'turns /%s into a control command with an ephemeral answer',
    (name) => {
      const inbound = interactions.parse(signedInteraction(slashCommand(name)));
      if (inbound.kind !== 'control') throw new Error(`expected control, got ${inbound.kind}`);
      expect(inbound.command).toBe(name);
      expect(inbound.thread).toBe(`discord:${CHANNEL}`);
      // The interaction's id: a redelivery of it is the same command, applied once.
      expect(inbound.idempotencyKey).toBe(`discord:${CHANNEL}:interaction:500000000000000005`);
      // A channel in a category has a parent_id too; it is not a thread.
      expect(inbound.ref).toEqual({
        platform: 'discord',
        channelId: CHANNEL,
        messageId: '500000000000000005',
      });
      expect(inbound.respond('Cancelled.')).toEqual({ type: 4, data: { content: 'Cancelled.', flags: 64 } });
    },
  );

  it('places a command run in a thread in the thread, under its parent channel', () => {
    const command = slashCommand('cancel', {
      channel_id: THREAD,
      channel: { id: THREAD, type: 11, parent_id: CHANNEL },
    });
    const inbound = interactions.parse(signedInteraction(command));
    expect(inbound).toMatchObject({
      kind: 'control',
      thread: `discord:${THREAD}`,
      ref: { platform: 'discord', channelId: CHANNEL, threadId: THREAD },
    });
  });

  it.each([
    ['another command', slashCommand('deploy'), 'discord command /deploy'],
    [
      'a press of a button that is not ours',
      { ...slashCommand('cancel'), type: 3, data: { custom_id: 'vote:1', component_type: 2 } },
      'discord component that is not ours',
    ],
    ['an autocomplete', { ...slashCommand('cancel'), type: 4 }, 'discord interaction type 4'],
  ])('ignores %s', (_label, body, reason) => {
    expect(interactions.parse(signedInteraction(body))).toEqual({ kind: 'ignored', reason });
  });

  it('reads a press of a permission request’s button as an approval, answered to the clicker', () => {
    const click = {
      ...slashCommand('cancel'),
      type: 3,
      message: { id: '1400', channel_id: '1200' },
      data: { custom_id: 'ap:Zm9v:1', component_type: 2 },
    };
    const inbound = interactions.parse(signedInteraction(click));
    expect(inbound).toMatchObject({ kind: 'approval', approvalId: 'Zm9v', option: 1, privately: true });
    expect(inbound).toMatchObject({ ref: { platform: 'discord', messageId: '1400' } });
    if (inbound.kind !== 'approval') throw new Error('not an approval');
    expect(inbound.respond(undefined)).toEqual({ type: 6 });
    expect(inbound.respond('No.')).toEqual({ type: 4, data: { content: 'No.', flags: 64 } });
  });

  it.each([
    ['a body that is not JSON', '{"type":1', 'body is not JSON'],
    ['a type that is a string', { ...ping, type: '1' }, 'type must be an integer'],
    ['a command without data', { ...slashCommand('cancel'), data: undefined }, 'data is missing'],
    [
      'a command without channel',
      { ...slashCommand('cancel'), channel_id: undefined },
      'channel_id is missing',
    ],
    [
      'a channel id that is not a snowflake',
      { ...slashCommand('cancel'), channel_id: 'general' },
      'channel_id must be a Discord snowflake',
    ],
    [
      'a thread without parent',
      slashCommand('reset', { channel_id: THREAD, channel: { id: THREAD, type: 11 } }),
      'channel.parent_id is missing',
    ],
  ])('rejects %s, naming the field', (_label, body, problem) => {
    expect(rejection(() => interactions.parse(signedInteraction(body))).message).toContain(problem);
  });

  it.each([
    ['<@100> hi', 'hi'],
    ['<@!100> hi', 'hi'],
    ['hi <@1000>', 'hi <@1000>'],
  ])('stripSelfMention(%j) = %j', (text, stripped) => {
    expect(interactions.stripSelfMention(text, '100')).toBe(stripped);
  });
});
