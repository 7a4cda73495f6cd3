import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArrivalEventError, parseArrivalEvent } from '../src/index.js';
import { isBase64 } from '../src/parse-arrival-event.js';
import { arrivalEvent } from './arbitraries.js';

const valid = {
  eventId: 'C0CHAN:1735723800.000200',
  platform: 'slack',
  channelId: 'C0CHAN',
  sender: { id: 'U01ALICE', name: 'alice', displayName: 'Alice Liddell', isBot: false },
  timestamp: '2025-01-01T09:30:00.000Z',
  text: '',
  attachments: [{ kind: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }],
};

function rejection(value: unknown): InvalidArrivalEventError {
  try {
    parseArrivalEvent(value);
  } catch (error) {
    if (error instanceof InvalidArrivalEventError) return error;
    throw error;
  }
  throw new Error('parseArrivalEvent accepted it');
}

describe('parseArrivalEvent', () => {
  it('returns every valid event unchanged after a trip through JSON, as the queue stores it', () => {
    fc.assert(
      fc.property(arrivalEvent, (event) => {
        expect(parseArrivalEvent(JSON.parse(JSON.stringify(event)))).toStrictEqual(event);
      }),
    );
  });

  it('drops fields it does not know', () => {
    expect(
      parseArrivalEvent({ ...valid, injected: 'x', sender: { ...valid.sender, role: 'admin' } }),
    ).toStrictEqual(valid);
  });

  it.each([
    ['a non-object', null, 'event', 'must be an object'],
    ['a missing eventId', { ...valid, eventId: undefined }, 'eventId', 'must be a string'],
    ['an empty channelId', { ...valid, channelId: '' }, 'channelId', 'must not be empty'],
    ['an empty threadId', { ...valid, threadId: '' }, 'threadId', 'must not be empty'],
    [
      'a string isBot',
      { ...valid, sender: { ...valid.sender, isBot: 'no' } },
      'sender.isBot',
      'must be a boolean',
    ],
    ['a local timestamp', { ...valid, timestamp: '2025-01-01T10:30:00+01:00' }, 'timestamp', 'ISO-8601 UTC'],
    ['a null text', { ...valid, text: null }, 'text', 'must be a string'],
    ['a lone surrogate', { ...valid, text: 'a\ud800b' }, 'text', 'lone surrogate'],
    [
      'an unknown attachment kind',
      { ...valid, attachments: [{ kind: 'video' }] },
      'attachments[0].kind',
      "'link'",
    ],
    [
      'image data that is not base64',
      { ...valid, attachments: [{ kind: 'image', mimeType: 'image/png', data: 'not base64!' }] },
      'attachments[0].data',
      'base64',
    ],
    [
      'a relative link',
      { ...valid, attachments: [{ kind: 'link', uri: '/files/a.pdf', name: 'a.pdf' }] },
      'attachments[0].uri',
      'absolute URI',
    ],
    [
      'a text attachment without a MIME type',
      { ...valid, attachments: [{ kind: 'text', name: 'a.txt', mimeType: 'plain', text: '' }] },
      'attachments[0].mimeType',
      'MIME type',
    ],
  ])('rejects %s, naming the field', (_label, value, field, problem) => {
    const error = rejection(value);
    expect(error.field).toBe(field);
    expect(error.message).toContain(`invalid ArrivalEvent: ${field} `);
    expect(error.message).toContain(problem);
  });
});

describe('base64 check', () => {
  const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

  it('accepts exactly what the regular expression it replaced accepts', () => {
    const text = fc.string({
      unit: fc.constantFrom('A', 'z', '0', '9', '+', '/', '=', '-', '_', ' ', 'é'),
      maxLength: 14,
    });
    fc.assert(
      fc.property(text, (t) => {
        expect(isBase64(t)).toBe(BASE64.test(t));
      }),
      { numRuns: 5000 },
    );
  });

  it('checks an image of several megabytes, where the expression overflowed its stack', () => {
    const data = Buffer.alloc(6 * 1024 * 1024, 7).toString('base64');
    const event = { ...valid, attachments: [{ kind: 'image', mimeType: 'image/png', data }] };
    expect(parseArrivalEvent(event).attachments).toHaveLength(1);
    expect(() =>
      parseArrivalEvent({ ...event, attachments: [{ ...event.attachments[0], data: `${data}!` }] }),
    ).toThrow('base64');
  });
});
