import { describe, expect, it } from 'vitest';
import type { ArrivalEvent } from '../src/arrival-event.js';
import { InvalidArrivalEventError } from '../src/invalid-arrival-event-error.js';
import { arrivalFromBody, queuedArrival } from '../src/queued-arrival.js';
import { envelopeTokens, eventTokens } from '../src/token-count.js';

const event: ArrivalEvent = {
  eventId: '1700000000.000100',
  platform: 'slack',
  channelId: 'C1',
  threadId: '1700000000.000001',
  sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
  timestamp: '2026-11-21T10:00:00.000Z',
  text: 'check the build',
  attachments: [],
};

describe('queued arrival', () => {
  it('round-trips an event through the queue body', () => {
    const queued = queuedArrival(event, 'slack:C1:1700000000.000100');
    expect(queued).toMatchObject({
      id: event.eventId,
      idempotencyKey: 'slack:C1:1700000000.000100',
      origin: 'user',
      lane: 'U1',
    });
    expect(arrivalFromBody(queued.body)).toEqual(event);
    expect(queuedArrival({ ...event, sender: { ...event.sender, isBot: true } }, 'k').origin).toBe('agent');
  });

  it('carries the event’s token count, more than the envelope alone', () => {
    const { tokens } = queuedArrival(event, 'k');
    expect(tokens).toBe(eventTokens(event));
    expect(tokens).toBeGreaterThan(envelopeTokens(event));
  });

  it('rejects a body that is not an event', () => {
    expect(() => arrivalFromBody('{"eventId": 1}')).toThrow(InvalidArrivalEventError);
    expect(() => arrivalFromBody('not json')).toThrow('invalid ArrivalEvent: event is not JSON');
  });
});
