import type { ProcessingMode } from '@tributary/queue';
import {
  type Clock,
  Debounce,
  type DispatchPolicy,
  DropOldestQueue,
  Forward,
  OverwriteSlot,
  type Submit,
} from './policies.js';

export interface Strategy {
  name: string;
  description: string;
  /** The processing mode of the broker the policy hands its prompts to. */
  mode: ProcessingMode;
  /** Whether the policy needs to hear that a turn was answered before it goes on. */
  waitsForAnswer: boolean;
  /** The broker steers mid-turn arrivals into the running turn of an agent that steers (ADR 0040). */
  steering?: true;
  policy<M>(clock: Clock, submit: Submit<M>): DispatchPolicy<M>;
}

const DEBOUNCE_MS = 2_000;
const QUEUE_CAPACITY = 10;
const QUEUE_MAX_AGE_MS = 90_000;

const tributary = (mode: ProcessingMode, description: string): Strategy => ({
  name: mode,
  description,
  mode,
  waitsForAnswer: false,
  policy: (_clock, submit) => new Forward(submit),
});

export const strategies: readonly Strategy[] = [
  tributary('per-thread', 'Tributary default: one turn at a time, all waiting messages at the turn boundary'),
  tributary('per-lane', 'Tributary: like per-thread, but a batch ends where the sender changes'),
  tributary('per-message', 'Tributary: one message per turn, in order'),
  {
    ...tributary('per-thread', ''),
    name: 'steering',
    description:
      'Tributary per-thread with STEERING on: a message that arrives mid-turn joins the running turn',
    steering: true,
  },
  {
    name: 'debounce-2s',
    description: 'prompt sent after 2 s of quiet, everything since the last prompt in it; prompts queue',
    mode: 'per-message',
    waitsForAnswer: false,
    policy: (clock, submit) => new Debounce(clock, submit, DEBOUNCE_MS),
  },
  {
    name: 'overwrite-slot',
    description: 'idle: sent at once; busy: one pending slot, the newest message replaces it',
    mode: 'per-message',
    waitsForAnswer: true,
    policy: (_clock, submit) => new OverwriteSlot(submit),
  },
  {
    name: 'drop-oldest-10',
    description: 'idle: sent at once; busy: queue of 10 dropping its oldest, entries expire after 90 s',
    mode: 'per-message',
    waitsForAnswer: true,
    policy: (clock, submit) => new DropOldestQueue(clock, submit, QUEUE_CAPACITY, QUEUE_MAX_AGE_MS),
  },
];
