/**
 * Stall and timeout policy as a pure function of `now`: soft and hard stall signals for the reaction
 * layer, then a timeout that cancels the turn. Any agent activity (an update) restarts the clock.
 */
export interface WatchdogLimits {
  stallSoftMs: number;
  stallHardMs: number;
  turnTimeoutMs: number;
}

export type WatchdogLevel = 'soft' | 'hard' | 'timeout';

/** The strongest level reached and not yet signalled since the last activity, if any. */
export function watchdogVerdict(
  now: number,
  lastActivityAt: number,
  signalled: WatchdogLevel | undefined,
  limits: WatchdogLimits,
): WatchdogLevel | undefined {
  const quiet = now - lastActivityAt;
  const reached: WatchdogLevel | undefined =
    quiet >= limits.turnTimeoutMs
      ? 'timeout'
      : quiet >= limits.stallHardMs
        ? 'hard'
        : quiet >= limits.stallSoftMs
          ? 'soft'
          : undefined;
  const rank = (level: WatchdogLevel | undefined) =>
    level ? ['soft', 'hard', 'timeout'].indexOf(level) + 1 : 0;
  return rank(reached) > rank(signalled) ? reached : undefined;
}

/** Runs the policy on a timer for one turn. */
export class TurnWatchdog {
  private lastActivityAt = Date.now();
  private signalled: WatchdogLevel | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limits: WatchdogLimits,
    private readonly onLevel: (level: WatchdogLevel, quietMs: number) => void,
  ) {
    const tick = Math.max(20, Math.min(1_000, Math.floor(limits.stallSoftMs / 4)));
    this.timer = setInterval(() => this.check(), tick);
  }

  activity(): void {
    this.lastActivityAt = Date.now();
    this.signalled = undefined;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    const now = Date.now();
    const level = watchdogVerdict(now, this.lastActivityAt, this.signalled, this.limits);
    if (!level) return;
    this.signalled = level;
    this.onLevel(level, now - this.lastActivityAt);
  }
}
