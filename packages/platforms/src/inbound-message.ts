import { InvalidArrivalEventError, parseArrivalEvent } from '@tributary/packing';
import { type Inbound, type InboundMessage, InvalidWebhookError } from './inbound.js';
import { compact } from './json-body.js';

/**
 * Wraps a parsed message as an Inbound. The event goes through `parseArrivalEvent`, so an adapter can
 * never hand ingress an event the queue or the packer would refuse; undefined optional fields are
 * dropped there.
 */
export function messageInbound(message: InboundMessage): Inbound {
  let event: InboundMessage['event'];
  try {
    event = parseArrivalEvent(message.event);
  } catch (error) {
    if (error instanceof InvalidArrivalEventError) throw new InvalidWebhookError(error.message);
    throw error;
  }
  return {
    kind: 'message',
    message: compact({
      ...message,
      event,
      mentions: [...new Set(message.mentions)],
      ref: compact(message.ref),
    }),
  };
}

/** An edit, checked like a message: `message.event.editedAt` must be set. */
export function editInbound(message: InboundMessage): Inbound {
  const inbound = messageInbound(message);
  if (inbound.kind !== 'message') return inbound;
  return { kind: 'edit', message: inbound.message };
}

export function ignored(reason: string): Inbound {
  return { kind: 'ignored', reason };
}
