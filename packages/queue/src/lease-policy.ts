/**
 * Heartbeat decisions as a pure function of `now`, so the policy is table-tested without timers.
 * A lease is only trusted while a renewal confirmed it: when renewals fail for other reasons (Redis
 * unreachable), the turn is given up before the lease could have run out on the Redis clock.
 */
export type RenewResult = { kind: 'renewed' } | { kind: 'fenced' } | { kind: 'error' };

export type HeartbeatVerdict = { kind: 'keep'; trustedUntil: number } | { kind: 'abort'; why: string };

export function heartbeatVerdict(
  now: number,
  trustedUntil: number,
  result: RenewResult,
  leaseMs: number,
): HeartbeatVerdict {
  switch (result.kind) {
    case 'renewed':
      // `now` is when the renewal was sent; a third of the lease stays as margin for pauses.
      return { kind: 'keep', trustedUntil: now + leaseMs - Math.ceil(leaseMs / 3) };
    case 'fenced':
      return { kind: 'abort', why: 'lease taken over by another owner' };
    case 'error':
      return now >= trustedUntil
        ? { kind: 'abort', why: 'lease could not be renewed before it expired' }
        : { kind: 'keep', trustedUntil };
  }
}

/** Heartbeats run three times per lease, so two may be lost before the margin is used up. */
export function heartbeatIntervalMs(leaseMs: number): number {
  return Math.max(10, Math.floor(leaseMs / 3));
}
