import type { ArrivalEvent } from './arrival-event.js';
import { InvalidArrivalEventError } from './invalid-arrival-event-error.js';
import { parseArrivalEvent } from './parse-arrival-event.js';
import { eventTokens } from './token-count.js';

/** An ArrivalEvent in the shape the turn queue stores (its body is the event's JSON). */
export interface QueuedArrival {
  id: string;
  /**
   * Platform identity of the message, as its inbound adapter gives it (`idempotencyKey`): a platform retry
   * carries the same one, and only the adapter knows what stays the same across retries.
   */
  idempotencyKey: string;
  body: string;
  origin: 'user' | 'agent';
  /** Counted here, where the event is at hand, so the queue never parses the body to count it. */
  tokens: number;
  /** The sender: `per-lane` processing ends a batch where it changes. */
  lane: string;
}

export function queuedArrival(event: ArrivalEvent, idempotencyKey: string): QueuedArrival {
  return {
    id: event.eventId,
    idempotencyKey,
    body: JSON.stringify(event),
    origin: event.sender.isBot ? 'agent' : 'user',
    tokens: eventTokens(event),
    lane: event.sender.id,
  };
}

/** Reads a queued body back; the queue hands bodies over as stored, so they are validated again. */
export function arrivalFromBody(body: string): ArrivalEvent {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidArrivalEventError('event', 'is not JSON');
  }
  return parseArrivalEvent(value);
}
