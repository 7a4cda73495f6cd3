import type { MessageRef } from '@tributary/platforms';

/** How a turn ended, for the user: answered, cancelled, failed, or handed to another worker. */
/** `waiting`: the turn did not start and its batch waits, kept, for a slot of its route (docs/adr/0062). */
export type TurnEnding = 'answered' | 'cancelled' | 'failed' | 'handed-over' | 'waiting';

/** What the reaction layer hears about a running turn (progress and stall reactions). */
export interface TurnSignal {
  /** `progress`: the agent started a tool or showed its plan (`activity` says which). */
  kind: 'started' | 'progress' | 'stall-soft' | 'stall-hard' | 'finished';
  thread: string;
  batchId: string;
  /** The trailing message of the running batch: the one reactions go on. */
  target: MessageRef;
  quietMs?: number;
  /** Set on `progress`: a short line such as `running: Read src/index.ts`. */
  activity?: string;
  /** Set on `finished`. */
  ending?: TurnEnding;
}

export type TurnSignalListener = (signal: TurnSignal) => void;
