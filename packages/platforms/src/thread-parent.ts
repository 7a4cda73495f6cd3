import type { ArrivalEvent } from '@tributary/packing';
import type { ThreadParent } from './outbound.js';

/**
 * Whether the fetched thread parent is the event itself (the event started the thread). Slack and
 * Discord events carry the platform's message id (Slack `ts`, Discord snowflake) as their event id.
 */
export function isEventItself(parent: ThreadParent, event: ArrivalEvent): boolean {
  return parent.messageId === event.eventId;
}
