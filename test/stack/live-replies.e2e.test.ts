import { shownText, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postDiscordForwarded, postTelegramMessage, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  // Below every platform's own edit pace, so the pace the stream keeps is the platform's.
  stack = await startStack({ REPLY_STREAM_INTERVAL_MS: '300' });
});
afterAll(() => stack.close());

let seq = 0;

/** A message in a Discord thread of its own, as the forwarder delivers it; returns the thread's id. */
async function discordMessage(text: string): Promise<string> {
  seq += 1;
  const thread = String(880_000 + seq);
  const body = JSON.stringify({
    schema: 'tributary.discord.forwarded.v1',
    message: {
      id: String(770_000 + seq),
      type: 0,
      channel_id: thread,
      guild_id: '500001',
      author: { id: '42', username: 'ada', global_name: 'Ada' },
      content: `<@900> ${text}`,
      timestamp: new Date().toISOString().replace('Z', '+00:00'),
      mentions: [{ id: '900', username: 'tributary' }],
      attachments: [],
    },
    channel: { id: thread, parent_id: '600001', type: 11 },
  });
  const answer = await postDiscordForwarded(stack, body);
  expect(answer.body).toMatchObject({ outcome: 'accepted' });
  return thread;
}

function discordWrites(thread: string) {
  return stack
    .calls('discord', 'createMessage')
    .concat(stack.calls('discord', 'editMessage'))
    .filter((call) => call.path.startsWith(`/channels/${thread}/messages`))
    .sort((a, b) => a.seq - b.seq);
}

describe('live replies', () => {
  it('a long reply streams on past its first message, and the final reply edits what was streamed', async () => {
    const reply = Array.from({ length: 700 }, (_, n) => `w${n}`).join(' ');
    const thread = await discordMessage(`@agent ${JSON.stringify({ reply, chunks: 8, chunkDelayMs: 700 })}`);
    const final = (text: string | undefined) => text !== undefined && !text.endsWith(' …');
    await waitFor(
      () => {
        const shown = discordWrites(thread).map(shownText);
        return shown.filter(final).join(' ').includes(`w699`);
      },
      { what: 'the final reply, to its last word', timeoutMs: 30_000 },
    );
    const writes = discordWrites(thread);
    const posts = writes.filter((call) => call.method === 'createMessage');
    // Two messages, both posted by the stream (marked unfinished); the final reply posted none.
    expect(posts).toHaveLength(2);
    for (const post of posts) expect(shownText(post)!.endsWith(' …')).toBe(true);
    // Each message ends as its part of the reply.
    const lastOf = (id: string) =>
      writes.filter((call) => call.method === 'editMessage' && call.path.endsWith(`/${id}`)).at(-1);
    const messageIds = editedIn(thread);
    expect(messageIds).toHaveLength(2);
    const parts = messageIds.map((id) => shownText(lastOf(id)!)!);
    expect(parts.join(' ')).toBe(reply);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(2000);
  });

  it('a rate-limited streamed edit is skipped, never retried, and the final reply still comes', async () => {
    stack.api.failNext({ platform: 'discord', method: 'editMessage', status: 429, retryAfterSeconds: 25 });
    const reply = Array.from({ length: 60 }, (_, n) => `v${n}`).join(' ');
    const thread = await discordMessage(`@agent ${JSON.stringify({ reply, chunks: 6, chunkDelayMs: 600 })}`);
    await waitFor(() => discordWrites(thread).some((call) => shownText(call) === reply), {
      what: 'the final reply',
      timeoutMs: 20_000,
    });
    const edits = discordWrites(thread).filter((call) => call.method === 'editMessage');
    const limited = edits.findIndex((call) => call.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    // A retry would send the same draft again; the next write is the final reply instead.
    expect(edits.slice(limited + 1).map(shownText)).toEqual([reply]);
    expect(edits.filter((call) => call.status === 429)).toHaveLength(1);
  });

  it('shows Telegram that the bot is typing while the turn runs, and stops when it ends', async () => {
    const chat = -4_200_001;
    const typing = () =>
      stack
        .calls('telegram', 'sendChatAction')
        .filter((call) => (call.body as { chat_id: number }).chat_id === chat);
    await postTelegramMessage(stack, chat, 91_001, '@tributary_bot think\n@agent {"delayMs": 5000}');
    await waitFor(
      () =>
        stack
          .calls('telegram', 'sendMessage')
          .some((call) => (call.body as { chat_id: number }).chat_id === chat),
      { what: 'the reply', timeoutMs: 20_000 },
    );
    // Telegram shows a chat action for five seconds; a five-second turn needs it shown again.
    const during = typing();
    expect(during.length).toBeGreaterThanOrEqual(2);
    expect(during.every((call) => (call.body as { action: string }).action === 'typing')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(typing()).toHaveLength(during.length);
  });
});

/** The ids of the messages edited in a Discord thread, in the order of their first edit. */
function editedIn(thread: string): string[] {
  const edited = stack
    .calls('discord', 'editMessage')
    .filter((call) => call.path.startsWith(`/channels/${thread}/messages/`))
    .map((call) => call.path.split('/').at(-1)!);
  return [...new Set(edited)];
}
