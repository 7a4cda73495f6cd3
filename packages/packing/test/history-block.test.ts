import type { ContentBlock } from '@agentclientprotocol/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ArrivalEvent,
  buildHistoryBlock,
  countTokens,
  type HistoryTurn,
  historyUri,
  isHistoryBlock,
  packBatch,
  senderContext,
  unpackBatch,
} from '../src/index.js';
import { batch, userText } from './arbitraries.js';

const CAPS = { embeddedContext: true, image: true };

function event(eventId: string, text: string, sender = 'ada'): ArrivalEvent {
  return {
    eventId,
    platform: 'slack',
    channelId: 'C1',
    threadId: 'T1',
    sender: { id: `U-${sender}`, name: sender, displayName: sender.toUpperCase(), isBot: false },
    timestamp: '2026-01-02T03:04:05.000Z',
    text,
    attachments: [],
  };
}

function turn(n: number, events: ArrivalEvent[], reply = `reply ${n}`): HistoryTurn {
  return { batchId: `b${n}`, endedAt: Date.UTC(2026, 0, 2, 3, 4, n), events, reply, stopReason: 'end_turn' };
}

/** The block's text in either form. */
function textOf(block: ContentBlock): string {
  if (block.type === 'text') return block.text;
  if (block.type === 'resource' && 'text' in block.resource) return block.resource.text;
  throw new Error(`not a history block: ${block.type}`);
}

/** The block's JSON Lines, parsed. */
function linesOf(block: ContentBlock): Record<string, unknown>[] {
  const text = textOf(block);
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('history block', () => {
  it('is one resource with the thread’s history URI: a header, then each turn’s events and reply', async () => {
    const first = event('e1', 'check the build');
    const second = [event('e2', 'and e2e', 'bob'), event('e3', '', 'ada')];
    second[1]!.attachments = [
      { kind: 'text', name: 'log.txt', mimeType: 'text/plain', text: 'FAIL x' },
      { kind: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=', name: 'shot.png' },
    ];
    const built = buildHistoryBlock('slack:C1:T1', [turn(1, [first]), turn(2, second)], {
      maxTokens: 10_000,
      caps: CAPS,
    })!;

    expect(built).toMatchObject({ turns: 2, omittedTurns: 0 });
    expect(built.block).toMatchObject({
      type: 'resource',
      resource: { uri: 'tributary://thread/slack%3AC1%3AT1/history', mimeType: 'application/x-ndjson' },
    });
    expect(historyUri('slack:C1:T1')).toBe('tributary://thread/slack%3AC1%3AT1/history');
    expect(linesOf(built.block)).toEqual([
      expect.objectContaining({ schema: 'tributary.history.v1', turns: 2, omitted_turns: 0 }),
      { batch_id: 'b1', role: 'user', sender_context: senderContext(first), text: 'check the build' },
      {
        batch_id: 'b1',
        role: 'agent',
        ended_at: '2026-01-02T03:04:01.000Z',
        stop_reason: 'end_turn',
        text: 'reply 1',
      },
      { batch_id: 'b2', role: 'user', sender_context: senderContext(second[0]!), text: 'and e2e' },
      {
        batch_id: 'b2',
        role: 'user',
        sender_context: senderContext(second[1]!),
        text: '',
        // Media are named, not repeated: their bytes are not history.
        attachments: [
          { kind: 'text', name: 'log.txt', mime_type: 'text/plain', text: 'FAIL x' },
          { kind: 'image', mime_type: 'image/png', name: 'shot.png' },
        ],
      },
      expect.objectContaining({ batch_id: 'b2', role: 'agent', text: 'reply 2' }),
    ]);
    expect(built.tokens).toBe(countTokens((built.block as { resource: { text: string } }).resource.text));
  });

  it('keeps the newest turns within the budget and leaves older ones out whole', () => {
    const turns = Array.from({ length: 30 }, (_, i) =>
      turn(i + 1, [event(`e${i}`, `message ${i} `.repeat(20))]),
    );
    const built = buildHistoryBlock('th', turns, { maxTokens: 1_500, caps: CAPS })!;

    expect(built.tokens).toBeLessThanOrEqual(1_500);
    expect(built.omittedTurns).toBeGreaterThan(0);
    expect(built.turns + built.omittedTurns).toBe(30);
    const batches = [...new Set(linesOf(built.block).flatMap((l) => (l.batch_id ? [l.batch_id] : [])))];
    expect(batches).toEqual(turns.slice(30 - built.turns).map((t) => t.batchId));
    expect(linesOf(built.block)[0]).toMatchObject({ turns: built.turns, omitted_turns: built.omittedTurns });
  });

  it('is absent when there is no turn, or when not even the newest one fits', () => {
    expect(buildHistoryBlock('th', [], { maxTokens: 1_000, caps: CAPS })).toBeUndefined();
    const big = turn(1, [event('e1', 'word '.repeat(500))]);
    expect(buildHistoryBlock('th', [big], { maxTokens: 100, caps: CAPS })).toBeUndefined();
  });

  it('leaves out a turn with a huge one-word file and keeps the newer ones', () => {
    const file = event('e1', 'see attached');
    file.attachments = [
      { kind: 'text', name: 'dump.txt', mimeType: 'text/plain', text: 'x'.repeat(220_000) },
    ];
    const turns = [turn(1, [file]), turn(2, [event('e2', 'and now?')])];
    const built = buildHistoryBlock('slack:C1:T1', turns, { maxTokens: 8_000, caps: CAPS });
    expect(built).toMatchObject({ turns: 1, omittedTurns: 1 });
    expect(linesOf(built!.block).map((line) => line.text)).toEqual([undefined, 'and now?', 'reply 2']);
  });

  it('is a marked text block for agents without embedded context', () => {
    const built = buildHistoryBlock('th', [turn(1, [event('e1', 'hi')])], { maxTokens: 1_000, caps: {} })!;
    expect(built.block).toMatchObject({
      type: 'text',
      _meta: {
        'tributary/part': 'history',
        'tributary/uri': 'tributary://thread/th/history',
        'tributary/mimeType': 'application/x-ndjson',
      },
    });
  });

  it('stands apart from user events: no boundary, and a strict reader refuses it before a batch', () => {
    const events = [event('e9', 'now')];
    const { block } = buildHistoryBlock('th', [turn(1, [event('e1', 'before')])], {
      maxTokens: 1_000,
      caps: CAPS,
    })!;
    const packed = packBatch(events, CAPS);
    expect(isHistoryBlock(block)).toBe(true);
    expect(packed.some(isHistoryBlock)).toBe(false);
    expect(() => unpackBatch([block, ...packed])).toThrow(/block 0 \(resource\)/);
    expect(unpackBatch([block, ...packed].filter((b) => !isHistoryBlock(b)))).toHaveLength(1);
  });

  it('carries every event’s sender and text, and every reply, exactly, whatever users typed', () => {
    const turns = fc.array(
      fc
        .record({ n: fc.nat({ max: 59 }), events: batch, reply: userText })
        .map(({ n, events, reply }) => turn(n, events, reply)),
      { minLength: 1, maxLength: 4 },
    );
    fc.assert(
      fc.property(turns, fc.constantFrom({}, CAPS), (history, caps) => {
        const lines = linesOf(buildHistoryBlock('th', history, { maxTokens: 1_000_000, caps })!.block);
        expect(lines.filter((l) => l.role === 'user').map((l) => [l.sender_context, l.text])).toEqual(
          history.flatMap((t) => t.events.map((e) => [senderContext(e), e.text])),
        );
        expect(lines.filter((l) => l.role === 'agent').map((l) => l.text)).toEqual(
          history.map((t) => t.reply),
        );
      }),
      { numRuns: 100 },
    );
  });
});
