import type { ReplyTarget } from './outbox.js';

/** What the reaction layer hears about a running turn (progress and stall reactions). */
export interface TurnSignal {
  kind: 'started' | 'stall-soft' | 'stall-hard' | 'finished';
  thread: string;
  batchId: string;
  /** The trailing message of the running batch: the one reactions go on. */
  target: ReplyTarget;
  quietMs?: number;
}

export type TurnSignalListener = (signal: TurnSignal) => void;
