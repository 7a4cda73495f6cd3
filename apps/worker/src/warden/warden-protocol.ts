/**
 * What a worker and its warden say to each other, one line each: commands on the warden's stdin,
 * reports on its fd 3. A worker that dies closes the stdin without `bye`.
 */
export type WardenCommand =
  /** An agent process group to kill if the worker dies or freezes. */
  | { kind: 'watch'; pgid: number }
  | { kind: 'forget'; pgid: number }
  /** The worker's event loop runs; `presence` is the value to announce (PRESENCE in the queue). */
  | { kind: 'pulse'; presence: string }
  /** Stop announcing and delete the presence key; answered by `withdrawn`. */
  | { kind: 'withdraw' }
  /** A clean stop: the stdin closes next, and nothing is left to kill. */
  | { kind: 'bye' };

export type WardenReport =
  | { kind: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> }
  /**
   * The agent host granted the warden's lease: the ticket the worker's spawns carry there. Before
   * `present`, and again whenever the warden takes the lease anew.
   */
  | { kind: 'hostTicket'; ticket: string }
  /** Redis confirmed the presence for the first time: the worker may claim threads. */
  | { kind: 'present' }
  /** Redis confirmed this presence value. */
  | { kind: 'announced'; presence: string }
  /** The warden killed the worker's agents and withdrew its presence: its threads may be taken over. */
  | { kind: 'revoked'; why: string }
  | { kind: 'withdrawn' };

export function encodeCommand(command: WardenCommand): string {
  switch (command.kind) {
    case 'watch':
    case 'forget':
      return `${command.kind} ${command.pgid}\n`;
    case 'pulse':
      return `pulse ${command.presence}\n`;
    default:
      return `${command.kind}\n`;
  }
}

export function parseCommand(line: string): WardenCommand | undefined {
  const [kind, arg] = line.trim().split(' ');
  switch (kind) {
    case 'watch':
    case 'forget': {
      const pgid = Number(arg);
      return Number.isInteger(pgid) && pgid > 1 ? { kind, pgid } : undefined;
    }
    case 'pulse':
      return arg === undefined ? undefined : { kind, presence: arg };
    case 'withdraw':
    case 'bye':
      return { kind };
    default:
      return undefined;
  }
}

export function encodeReport(report: WardenReport): string {
  return `${JSON.stringify(report)}\n`;
}

export function parseReport(line: string): WardenReport | undefined {
  try {
    const value = JSON.parse(line) as Partial<WardenReport>;
    return typeof value?.kind === 'string' ? (value as WardenReport) : undefined;
  } catch {
    return undefined;
  }
}
