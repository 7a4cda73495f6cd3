import { createHmac } from 'node:crypto';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GUILD_ID,
  guildCreate,
  messageCreate,
  OTHER_CHANNEL_ID,
  ownMessage,
  publicThread,
  TEXT_CHANNEL_ID,
} from './discord-payloads.js';
import { type ForwarderHarness, SECRET, startReadyHarness, TOKEN } from './forwarder-fixture.js';

// GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT, from Discord's documented bit positions.
const EXPECTED_INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);

let harness: ForwarderHarness;
afterEach(() => harness.close());

describe('forwarding Gateway messages to ingress', () => {
  it('identifies with the token and intents, and keeps the heartbeat acknowledged', async () => {
    harness = await startReadyHarness();
    expect(harness.discord.identifies).toEqual([{ token: TOKEN, intents: EXPECTED_INTENTS, shard: [0, 1] }]);
    await waitFor(() => harness.discord.heartbeatsAcked >= 2, { what: 'two heartbeats' });
    expect(harness.discord.readySessions).toBe(1);
  });

  it('posts the MESSAGE_CREATE payload as received, in the v1 envelope, signed over the raw body', async () => {
    harness = await startReadyHarness();
    harness.discord.dispatch('GUILD_CREATE', guildCreate());
    const message = messageCreate(TEXT_CHANNEL_ID, 'hello <@900000000000000001> ünïcödé 🎉');
    harness.discord.dispatch('MESSAGE_CREATE', message);

    await waitFor(() => harness.ingress.accepted.length === 1);
    const forward = harness.ingress.accepted[0]!;
    expect(forward.body).toBe(
      JSON.stringify({
        schema: 'tributary.discord.forwarded.v1',
        message,
        channel: { id: TEXT_CHANNEL_ID, parent_id: null, type: 0 },
      }),
    );
    expect(forward.timestamp).toMatch(/^\d{10}$/);
    expect(forward.signature).toBe(
      `v1=${createHmac('sha256', SECRET).update(`v1:${forward.timestamp}:${forward.body}`).digest('hex')}`,
    );
  });

  it('says null for the type and parent of a channel it has not been told about', async () => {
    harness = await startReadyHarness();
    const message = messageCreate(OTHER_CHANNEL_ID, 'no guild create seen');
    harness.discord.dispatch('MESSAGE_CREATE', message);

    await waitFor(() => harness.ingress.accepted.length === 1);
    expect(harness.ingress.accepted[0]!.json.channel).toEqual({
      id: OTHER_CHANNEL_ID,
      parent_id: null,
      type: null,
    });
  });

  it.each<[string, (thread: object) => [event: string, data: unknown]]>([
    ['THREAD_CREATE', (thread) => ['THREAD_CREATE', thread]],
    ['GUILD_CREATE', (thread) => ['GUILD_CREATE', guildCreate([thread])]],
    [
      'THREAD_LIST_SYNC',
      (thread) => ['THREAD_LIST_SYNC', { guild_id: GUILD_ID, threads: [thread], members: [] }],
    ],
  ])('gives a thread message its parent channel, learnt from %s', async (_name, announce) => {
    harness = await startReadyHarness();
    const thread = publicThread(TEXT_CHANNEL_ID);
    harness.discord.dispatch(...announce(thread));
    harness.discord.dispatch('MESSAGE_CREATE', messageCreate(thread.id, 'in the thread'));

    await waitFor(() => harness.ingress.accepted.length === 1);
    expect(harness.ingress.accepted[0]!.json.channel).toEqual({
      id: thread.id,
      parent_id: TEXT_CHANNEL_ID,
      type: 11,
    });
  });

  it('forgets a deleted thread', async () => {
    harness = await startReadyHarness();
    const thread = publicThread(TEXT_CHANNEL_ID);
    harness.discord.dispatch('THREAD_CREATE', thread);
    harness.discord.dispatch('THREAD_DELETE', {
      id: thread.id,
      guild_id: thread.guild_id,
      parent_id: TEXT_CHANNEL_ID,
      type: 11,
    });
    harness.discord.dispatch('MESSAGE_CREATE', messageCreate(thread.id, 'late message'));

    await waitFor(() => harness.ingress.accepted.length === 1);
    expect(harness.ingress.accepted[0]!.json.channel).toEqual({ id: thread.id, parent_id: null, type: null });
  });

  it('does not forward messages of its own bot user', async () => {
    harness = await startReadyHarness();
    const own = ownMessage(TEXT_CHANNEL_ID, 'a reply the worker posted');
    const human = messageCreate(TEXT_CHANNEL_ID, 'a human answer');
    harness.discord.dispatch('MESSAGE_CREATE', own);
    harness.discord.dispatch('MESSAGE_CREATE', human);

    // Same channel, so had the first been forwarded it would have arrived before the second.
    await waitFor(() => harness.ingress.accepted.length >= 1);
    expect(harness.ingress.attempts.map((forward) => forward.json.message.id)).toEqual([human.id]);
  });

  it('forwards edits and deletes after the message, in its channel lane, naming the dispatch', async () => {
    harness = await startReadyHarness();
    harness.discord.dispatch('GUILD_CREATE', guildCreate());
    const message = messageCreate(TEXT_CHANNEL_ID, 'first wording');
    const update = { ...message, content: 'second wording', edited_timestamp: new Date().toISOString() };
    const deletion = { id: message.id, channel_id: TEXT_CHANNEL_ID, guild_id: GUILD_ID };
    // Our own reply streams by editing its message: those edits are not forwarded either.
    const own = ownMessage(TEXT_CHANNEL_ID, 'a streamed reply');
    harness.discord.dispatch('MESSAGE_CREATE', message);
    harness.discord.dispatch('MESSAGE_UPDATE', { ...own, edited_timestamp: new Date().toISOString() });
    harness.discord.dispatch('MESSAGE_UPDATE', update);
    harness.discord.dispatch('MESSAGE_DELETE', deletion);

    await waitFor(() => harness.ingress.accepted.length === 3, { what: 'three forwards' });
    const channel = { id: TEXT_CHANNEL_ID, parent_id: null, type: 0 };
    expect(harness.ingress.accepted.map((forward) => forward.body)).toEqual([
      JSON.stringify({ schema: 'tributary.discord.forwarded.v1', message, channel }),
      JSON.stringify({
        schema: 'tributary.discord.forwarded.v1',
        dispatch: 'MESSAGE_UPDATE',
        message: update,
        channel,
      }),
      JSON.stringify({
        schema: 'tributary.discord.forwarded.v1',
        dispatch: 'MESSAGE_DELETE',
        message: deletion,
        channel,
      }),
    ]);
  });
});
