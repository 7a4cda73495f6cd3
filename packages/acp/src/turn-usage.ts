import type { Cost, StopReason } from '@agentclientprotocol/sdk';

/**
 * The tokens one turn used, as the agent reports them when the turn ends: ACP's `usage` (unstable) on
 * a v1 prompt's answer or on the v2 idle state that ends the turn. Counts the agent leaves out stay
 * out; nothing here estimates them.
 */
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  thoughtTokens?: number;
  cachedReadTokens?: number;
  cachedWriteTokens?: number;
}

/** How a prompt ended: why it stopped and, from an agent that reports it, what it used. */
export interface PromptEnd {
  stopReason: StopReason;
  usage?: TurnUsage;
}

const REQUIRED = ['inputTokens', 'outputTokens', 'totalTokens'] as const;
const OPTIONAL = ['thoughtTokens', 'cachedReadTokens', 'cachedWriteTokens'] as const;

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The usage an agent put on a turn's end, or undefined where it sent none or one that is not a usage:
 * a malformed report must not fail a turn whose reply is fine, nor be counted as tokens.
 */
export function readTurnUsage(value: unknown): TurnUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const reported = value as Record<string, unknown>;
  if (!REQUIRED.every((key) => isCount(reported[key]))) return undefined;
  const usage: TurnUsage = {
    inputTokens: reported.inputTokens as number,
    outputTokens: reported.outputTokens as number,
    totalTokens: reported.totalTokens as number,
  };
  for (const key of OPTIONAL) if (isCount(reported[key])) usage[key] = reported[key];
  return usage;
}

/** A prompt's end with the usage read from what the agent sent beside its stop reason. */
export function promptEnd(stopReason: StopReason, usage: unknown): PromptEnd {
  const read = readTurnUsage(usage);
  return read === undefined ? { stopReason } : { stopReason, usage: read };
}

/**
 * What a session's cost grew by in one turn. ACP's `usage_update` reports the session's cost so far,
 * so a turn's share is the difference from the report before it; where that is unknown (a session
 * reopened from an earlier process, a change of currency, a report that went down), the turn's cost is
 * unknown too and is left out rather than guessed.
 */
export function costOfTurn(before: Cost | undefined, after: Cost | undefined): Cost | undefined {
  if (before === undefined || after === undefined || before.currency !== after.currency) return undefined;
  const amount = after.amount - before.amount;
  return amount >= 0 && Number.isFinite(amount) ? { amount, currency: after.currency } : undefined;
}
