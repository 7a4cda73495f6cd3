import { describe, expect, it } from 'vitest';
import { costOfTurn, readTurnUsage } from '../src/turn-usage.js';
import { startPool, tempDir, text } from './support.js';

/** The built-in agent's prices (apps/agent's scripted turn): USD per input and per output token. */
const INPUT_PRICE = 3e-6;
const OUTPUT_PRICE = 15e-6;

const usageDefaults = { TRIBUTARY_AGENT_DEFAULTS: JSON.stringify({ usage: true, reply: 'twelve chars' }) };

describe('what a turn used', () => {
  it("arrives with the turn's end, and each turn's cost is its share of the session's", async () => {
    const { pool } = await startPool({ env: usageDefaults });

    const first = await pool.runTurn('thread-1', [text('hello')]);
    const second = await pool.runTurn('thread-1', [text('a longer message this time')]);

    for (const [turn, prompt] of [
      [first, 'hello'],
      [second, 'a longer message this time'],
    ] as const) {
      const inputTokens = Math.ceil(JSON.stringify([text(prompt)]).length / 4);
      const outputTokens = Math.ceil('twelve chars'.length / 4);
      expect(turn.usage).toEqual({ inputTokens, outputTokens, totalTokens: inputTokens + outputTokens });
      // Each usage_update carries the session's cost so far; the turn is charged the difference.
      expect(turn.cost?.currency).toBe('USD');
      expect(turn.cost?.amount).toBeCloseTo(inputTokens * INPUT_PRICE + outputTokens * OUTPUT_PRICE, 12);
    }
  });

  it('is absent where the agent reports none', async () => {
    const { pool } = await startPool();

    const result = await pool.runTurn('thread-1', [text('hello')]);

    expect(result.stopReason).toBe('end_turn');
    expect(result.usage).toBeUndefined();
    expect(result.cost).toBeUndefined();
  });

  it('leaves out the first cost of a session reopened from an earlier process: its share is unknown', async () => {
    const stateDir = await tempDir();
    const first = await startPool({ stateDir, env: usageDefaults });
    const earlier = await first.pool.runTurn('thread-1', [text('remember me')]);
    await first.pool.close();
    const { pool } = await startPool({ stateDir, env: usageDefaults });

    await pool.loadOrResume('thread-1', earlier.sessionId);
    const reopened = await pool.runTurn('thread-1', [text('again')], { sessionId: earlier.sessionId });
    const next = await pool.runTurn('thread-1', [text('and again')], { sessionId: earlier.sessionId });

    expect(reopened.usage?.totalTokens).toBeGreaterThan(0);
    expect(reopened.cost).toBeUndefined();
    expect(next.cost?.amount).toBeGreaterThan(0);
  });
});

describe('readTurnUsage', () => {
  it('keeps the counts an agent sent and drops what is not a count', () => {
    expect(
      readTurnUsage({
        inputTokens: 10,
        outputTokens: 2,
        totalTokens: 12,
        thoughtTokens: 3,
        cachedReadTokens: -1,
      }),
    ).toEqual({ inputTokens: 10, outputTokens: 2, totalTokens: 12, thoughtTokens: 3 });
    expect(readTurnUsage({ inputTokens: 10, outputTokens: '2', totalTokens: 12 })).toBeUndefined();
    expect(readTurnUsage({ inputTokens: 1.5, outputTokens: 2, totalTokens: 3.5 })).toBeUndefined();
    expect(readTurnUsage(null)).toBeUndefined();
    expect(readTurnUsage('12')).toBeUndefined();
  });
});

describe('costOfTurn', () => {
  it('is the growth of the session cost, and unknown where it cannot be told', () => {
    expect(costOfTurn({ amount: 1, currency: 'USD' }, { amount: 1.25, currency: 'USD' })).toEqual({
      amount: 0.25,
      currency: 'USD',
    });
    expect(costOfTurn(undefined, { amount: 1, currency: 'USD' })).toBeUndefined();
    expect(costOfTurn({ amount: 1, currency: 'USD' }, { amount: 2, currency: 'EUR' })).toBeUndefined();
    expect(costOfTurn({ amount: 2, currency: 'USD' }, { amount: 1, currency: 'USD' })).toBeUndefined();
  });
});
