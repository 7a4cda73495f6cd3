import { parseArrivalEvent } from '@tributary/packing';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { type InboundAdapter, InvalidWebhookError, type WebhookRequest } from '../src/index.js';
import { NOW, webhookRequest } from './support-inbound.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Values that have broken parsers: wrong types, lone surrogates, unsafe numbers, JSON look-alikes. */
const nasty: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, '', ' ', '\ud800', 'a\udfffb', true, [], {}, '0'),
  fc.constantFrom<Json>(-1, 0.5, 1e300, 2 ** 53 + 1, 2 ** 53 - 1, -(2 ** 53 - 1), 8.64e12),
  fc.integer(),
  fc.constantFrom<Json>('1531420618.000200', '2025-01-01T09:30:00+00:00', '1234567890123456789', 'x:y%z'),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
  fc.string({ unit: 'binary' }),
);

/** Every path into a JSON value, the root included. */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const children =
    value !== null && typeof value === 'object'
      ? Object.entries(value).flatMap(([key, child]) =>
          paths(child as Json, [...prefix, Array.isArray(value) ? Number(key) : key]),
        )
      : [];
  return [prefix, ...children];
}

function mutate(value: Json, path: (string | number)[], replacement: Json | undefined): Json {
  if (path.length === 0) return replacement ?? null;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const copy = structuredClone(value) as Record<string | number, Json>;
  const child = mutate(copy[head] as Json, rest, replacement);
  if (replacement === undefined && rest.length === 0) delete copy[head];
  else copy[head] = child;
  return copy as Json;
}

/** A valid sample with a few fields replaced by nasty values or deleted. */
export function mutatedBody(samples: readonly Json[]): fc.Arbitrary<Buffer> {
  const edit = fc.tuple(fc.nat(), fc.option(nasty, { nil: undefined }));
  return fc
    .tuple(fc.constantFrom(...samples), fc.array(edit, { minLength: 1, maxLength: 4 }))
    .map(([sample, edits]) =>
      edits.reduce<Json>((body, [pick, replacement]) => {
        const all = paths(body);
        return mutate(body, all[pick % all.length]!, replacement);
      }, sample),
    )
    .map((body) => Buffer.from(JSON.stringify(body)));
}

/** Bytes that are not a valid sample: random bytes, random JSON, valid bodies with a byte changed. */
export function garbledBody(samples: readonly Json[]): fc.Arbitrary<Buffer> {
  const flipped = fc
    .tuple(fc.constantFrom(...samples), fc.nat(), fc.integer({ min: 0, max: 255 }))
    .map(([sample, at, byte]) => {
      const bytes = Buffer.from(JSON.stringify(sample));
      bytes[at % bytes.length] = byte;
      return bytes;
    });
  return fc.oneof(
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    fc.json().map((text) => Buffer.from(text)),
    flipped,
  );
}

// Signatures and tokens look like this; random strings rarely would.
const hexLike = fc.string({ unit: fc.constantFrom(...'0123456789abcdefv=sha256') });

/** Header maps holding the adapter's headers with random, missing or garbled values. */
export function fuzzedHeaders(names: readonly string[], valid: Record<string, string>) {
  const value = (name: string) =>
    fc.option(fc.oneof(fc.constant(valid[name] ?? ''), fc.string({ unit: 'binary' }), hexLike), {
      nil: undefined,
    });
  return fc.record(Object.fromEntries(names.map((name) => [name, value(name)]))) as fc.Arbitrary<
    Record<string, string | undefined>
  >;
}

/** `verify` answers without throwing; `parse` returns a valid Inbound or throws InvalidWebhookError. */
export function checkAdapterSurvives(adapter: InboundAdapter, request: WebhookRequest): void {
  const verification = adapter.verify(request);
  expect(typeof verification.ok).toBe('boolean');
  let inbound: ReturnType<InboundAdapter['parse']>;
  try {
    inbound = adapter.parse(request);
  } catch (error) {
    if (error instanceof InvalidWebhookError) return;
    throw error;
  }
  expect(['message', 'control', 'handshake', 'ignored']).toContain(inbound.kind);
  if (inbound.kind !== 'message') return;
  const { event, thread, idempotencyKey, mentions } = inbound.message;
  // What the queue stores must read back unchanged.
  expect(parseArrivalEvent(JSON.parse(JSON.stringify(event)))).toStrictEqual(event);
  expect(thread.startsWith(`${adapter.platform}:`)).toBe(true);
  expect(idempotencyKey.startsWith(`${adapter.platform}:`)).toBe(true);
  for (const mention of mentions) expect(typeof mention).toBe('string');
}

export const FUZZ_RUNS = 2000;

export type { Json };

export interface AdapterFuzz {
  adapter: InboundAdapter;
  samples: readonly Json[];
  /** A correctly signed request carrying this body. */
  sign: (body: Buffer) => WebhookRequest;
  /** The headers the adapter verifies. */
  headerNames: readonly string[];
  /** The adapter checks a replay window: fuzz the clock too. */
  timestamped?: boolean;
}

/** The two fuzz properties every adapter must hold: signed mutations, and garbled bodies and headers. */
export function fuzzAdapter({ adapter, samples, sign, headerNames, timestamped = false }: AdapterFuzz): void {
  it('survives mutated, validly signed bodies', () => {
    fc.assert(
      fc.property(mutatedBody(samples), (body) => checkAdapterSurvives(adapter, sign(body))),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('survives garbled bodies and headers', () => {
    const valid = sign(Buffer.from(JSON.stringify(samples[0]))).headers as Record<string, string>;
    fc.assert(
      fc.property(
        garbledBody(samples),
        fuzzedHeaders(headerNames, valid),
        timestamped ? fc.integer() : fc.constant(0),
        (body, headers, skew) => checkAdapterSurvives(adapter, webhookRequest(body, headers, NOW + skew)),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });
}
