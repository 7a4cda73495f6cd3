/**
 * The warden's decisions as pure functions of `now` (monotonic milliseconds), table-tested without
 * processes or timers. The warden is what keeps a worker's agents inside its threads' ownership: it
 * announces the worker's presence only while the worker answers and Redis confirms the announcement,
 * and it kills the worker's agents before that announcement can lapse and another worker can take
 * the threads over.
 */
export interface WardenClock {
  /** When the worker last pulsed (its event loop ran). */
  lastPulseAt: number;
  /** Until when Redis is known to hold the presence key: a confirmed write's send time + TTL - margin. */
  trustedUntil: number;
}

export type WardenVerdict = { kind: 'keep' } | { kind: 'revoke'; why: string };

export function wardenVerdict(now: number, clock: WardenClock, stallToleranceMs: number): WardenVerdict {
  if (now - clock.lastPulseAt >= stallToleranceMs) {
    return { kind: 'revoke', why: `the worker did not answer for ${Math.round(now - clock.lastPulseAt)} ms` };
  }
  if (now >= clock.trustedUntil) {
    return { kind: 'revoke', why: 'Redis did not confirm the worker presence before it could expire' };
  }
  return { kind: 'keep' };
}

/**
 * How long a confirmed write is trusted: Redis started the key's TTL no earlier than the write was
 * sent, and a fifth of the TTL stays as margin for the kill itself and for clock rates.
 */
export function trustAfterWrite(sentAt: number, presenceTtlMs: number): number {
  return sentAt + presenceTtlMs - Math.ceil(presenceTtlMs / 5);
}

/** Whether the presence key should be written now: the worker answers and the last write is aging. */
export function presenceDue(
  now: number,
  clock: WardenClock & { lastWriteAt: number },
  stallToleranceMs: number,
  presenceTtlMs: number,
): boolean {
  return now - clock.lastPulseAt < stallToleranceMs && now - clock.lastWriteAt >= presenceTtlMs / 4;
}
