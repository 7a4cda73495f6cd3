import { type FakeApiCall, shownText, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlackEvent, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  // A workspace with Slack's streaming methods; the stream writes at Slack's pace, not this one.
  stack = await startStack(
    { REPLY_STREAM_INTERVAL_MS: '300' },
    undefined,
    {},
    { slackNativeStreaming: true },
  );
});
afterAll(() => stack.close());

let seq = 0;

/** A mention by U1 of workspace T1 starting a thread of its own in `channel`; returns the thread's ts. */
async function mention(channel: string, agent: object): Promise<string> {
  seq += 1;
  const ts = `1700700000.${String(seq).padStart(6, '0')}`;
  const event = {
    type: 'app_mention',
    channel,
    user: 'U1',
    text: `<@UBOT> go\n@agent ${JSON.stringify(agent)}`,
    ts,
  };
  const body = JSON.stringify({ type: 'event_callback', team_id: 'T1', event_id: `EvStream${seq}`, event });
  expect((await postSlackEvent(stack, body)).body).toMatchObject({ outcome: 'accepted' });
  return ts;
}

function callsIn(channel: string): FakeApiCall[] {
  return stack.api
    .calls()
    .filter((call) => call.platform === 'slack' && (call.body as { channel?: string }).channel === channel);
}

/** What each stream was sent, start and appends, by the message it made. */
function streamed(channel: string): Map<string, string> {
  const texts = new Map<string, string>();
  for (const call of callsIn(channel)) {
    const body = call.body as { ts?: string; markdown_text?: string };
    if (call.method === 'chat.startStream' && call.status === 200) {
      texts.set((call.answer as { ts: string }).ts, body.markdown_text ?? '');
    }
    if (call.method === 'chat.appendStream' && call.status === 200) {
      texts.set(body.ts!, `${texts.get(body.ts!) ?? ''}${body.markdown_text ?? ''}`);
    }
  }
  return texts;
}

describe('Slack replies streamed natively', () => {
  it('streams to the asker, appends as the reply grows, stops, and the final reply replaces it', async () => {
    const channel = 'CSTREAM1';
    const reply = Array.from({ length: 80 }, (_, n) => `word${n}`).join(' ');
    const root = await mention(channel, { reply, chunks: 8, chunkDelayMs: 600 });
    await waitFor(() => callsIn(channel).some((call) => shownText(call) === reply), {
      what: 'the final reply',
      timeoutMs: 30_000,
    });
    const calls = callsIn(channel).map((call) => call.method);
    const [start] = callsIn(channel).filter((call) => call.method === 'chat.startStream');
    expect(start!.body).toMatchObject({ thread_ts: root, recipient_user_id: 'U1', recipient_team_id: 'T1' });
    const [ts, text] = [...streamed(channel)][0]!;
    expect(calls.filter((method) => method === 'chat.appendStream').length).toBeGreaterThanOrEqual(2);
    expect(reply.startsWith(text!)).toBe(true);
    // Stopped before the final reply edits it; nothing posted beside the stream.
    expect(calls.indexOf('chat.stopStream')).toBeGreaterThan(-1);
    expect(calls.indexOf('chat.stopStream')).toBeLessThan(calls.lastIndexOf('chat.update'));
    expect(calls.filter((method) => method === 'chat.postMessage')).toEqual([]);
    expect(stack.api.message('slack', channel, ts!)).toMatchObject({ text: reply, streaming: 'completed' });
    expect(stack.api.message('slack', channel, ts!)!.blocks).toBeUndefined();
  });

  it('a long reply goes on in a further stream once one is full; the final reply edits them', {
    timeout: 60_000,
  }, async () => {
    const channel = 'CSTREAM2';
    // About 8,400 characters: three of Slack's 4,000-character messages, the second reached mid-turn.
    const reply = Array.from({ length: 1500 }, (_, n) => `w${n}`).join(' ');
    await mention(channel, { reply, chunks: 12, chunkDelayMs: 700 });
    const finalParts = () => {
      const latest = new Map<string, string>();
      for (const call of callsIn(channel)) {
        if (call.status !== 200) continue;
        const ts =
          call.method === 'chat.update'
            ? (call.body as { ts: string }).ts
            : (call.answer as { ts?: string }).ts;
        if (call.method === 'chat.update' || call.method === 'chat.postMessage')
          latest.set(ts!, shownText(call)!);
      }
      return [...latest.values()];
    };
    await waitFor(() => finalParts().join(' ') === reply, {
      what: () => `the final reply; Slack was sent ${JSON.stringify(callsIn(channel).map((c) => c.method))}`,
      timeoutMs: 45_000,
    });
    const streams = [...streamed(channel).keys()];
    expect(streams.length).toBeGreaterThanOrEqual(2);
    const calls = callsIn(channel);
    const stopOf = (ts: string) =>
      calls.findIndex((call) => call.method === 'chat.stopStream' && (call.body as { ts: string }).ts === ts);
    const startOf = (ts: string) =>
      calls.findIndex(
        (call) => call.method === 'chat.startStream' && (call.answer as { ts?: string }).ts === ts,
      );
    // Each stream was stopped before the next began, and each streamed message ends as its part.
    for (const [index, ts] of streams.slice(1).entries()) {
      expect(stopOf(streams[index]!)).toBeGreaterThan(-1);
      expect(stopOf(streams[index]!)).toBeLessThan(startOf(ts));
    }
    for (const [index, ts] of streams.entries()) {
      expect(stack.api.message('slack', channel, ts)!.text).toBe(finalParts()[index]);
    }
  });

  it('an agent’s <!channel> never forms a mention in the stream, nor in the final reply', async () => {
    const channel = 'CSTREAM3';
    const reply = `${'padding '.repeat(30)}then <!channel> and <@U999>, ${'more '.repeat(30)}`.trim();
    await mention(channel, { reply, chunks: 6, chunkDelayMs: 600 });
    await waitFor(() => callsIn(channel).some((call) => shownText(call) === reply), {
      what: 'the final reply',
      timeoutMs: 30_000,
    });
    expect(streamed(channel).size).toBe(1);
    for (const text of streamed(channel).values()) expect(text).not.toMatch(/<[!@]/);
    const [update] = callsIn(channel).filter((call) => call.method === 'chat.update');
    expect((update!.body as { text: string }).text).toContain('&lt;!channel&gt;');
  });

  it('a start that fails (Slack down a moment) has that reply edited, said at warn; the next reply streams', async () => {
    const channel = 'CSTREAM5';
    stack.api.failNext({ platform: 'slack', method: 'chat.startStream', status: 503 });
    const reply = Array.from({ length: 60 }, (_, n) => `x${n}`).join(' ');
    await mention(channel, { reply, chunks: 6, chunkDelayMs: 600 });
    await waitFor(() => callsIn(channel).some((call) => shownText(call) === reply), {
      what: 'the final reply',
      timeoutMs: 30_000,
    });
    const [draft] = callsIn(channel).filter((call) => call.method === 'chat.postMessage');
    expect(shownText(draft!)!.endsWith(' …')).toBe(true);
    expect(stack.warnings().map((line) => line.msg)).toContain(
      'streamed reply not updated; the final reply still follows',
    );
    expect(await stack.workerMetrics.registry.metrics()).toMatch(
      /tributary_platform_api_calls_total\{platform="slack",method="chat.startStream",status="503"\} 1/,
    );
    // Not the workspace's refusal: the next reply streams natively again.
    const again = 'CSTREAM6';
    await mention(again, { reply, chunks: 6, chunkDelayMs: 600 });
    await waitFor(() => callsIn(again).some((call) => shownText(call) === reply), {
      what: 'the next reply',
      timeoutMs: 30_000,
    });
    expect(streamed(again).size).toBe(1);
  });

  // Last: the client remembers a workspace that cannot stream for the rest of the stack's life.
  it('a workspace that refuses streaming gets the reply by edits, said once at warn', async () => {
    const channel = 'CSTREAM4';
    stack.api.failNext({
      platform: 'slack',
      method: 'chat.startStream',
      status: 200,
      error: 'not_allowed_token_type',
    });
    const reply = Array.from({ length: 60 }, (_, n) => `v${n}`).join(' ');
    await mention(channel, { reply, chunks: 6, chunkDelayMs: 600 });
    await waitFor(() => callsIn(channel).some((call) => shownText(call) === reply), {
      what: 'the final reply',
      timeoutMs: 30_000,
    });
    const methods = callsIn(channel)
      .map((call) => call.method)
      .filter((method) => method.startsWith('chat.'));
    expect(methods[0]).toBe('chat.startStream');
    expect(methods.filter((method) => method === 'chat.startStream')).toHaveLength(1);
    const [draft] = callsIn(channel).filter((call) => call.method === 'chat.postMessage');
    expect(shownText(draft!)!.endsWith(' …')).toBe(true);
    expect(stack.warnings().map((line) => line.msg)).toContain(
      'the workspace refused native streaming; replies stream as edits (set SLACK_REPLY_STREAMING=edits to skip the try)',
    );
    expect(await stack.workerMetrics.registry.metrics()).toContain(
      'tributary_platform_streaming_refusals_total{platform="slack"} 1',
    );
  });
});
