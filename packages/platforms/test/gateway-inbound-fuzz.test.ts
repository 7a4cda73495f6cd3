import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  checkAdapterSurvives,
  FUZZ_RUNS,
  fuzzedHeaders,
  garbledBody,
  type Json,
  mutatedBody,
} from './fuzz-inbound.js';
import {
  gateway,
  gatewayEvent,
  inChannel,
  signedGatewayRequest,
  withAttachments,
} from './gateway-inbound-fixtures.js';
import { webhookRequest } from './support-inbound.js';

const samples = [
  gatewayEvent(),
  gatewayEvent({
    ...inChannel('c:1', 't:1'),
    mentions: ['a'],
    proactive: false,
    ...withAttachments(
      { type: 'text_file', filename: 'a', mime_type: 'text/plain', data: 'eA==', size: 1 },
      { type: 'image', filename: 'b', mime_type: 'image/png', data: 'AAAA', size: 3 },
      { type: 'audio', filename: 'c', mime_type: 'audio/ogg', size: 9, path: '/x/c', status: 'too big' },
    ),
  }),
] as Json[];

describe('gateway adapter under fuzzing', () => {
  it('survives mutated, validly signed events', () => {
    fc.assert(
      fc.property(mutatedBody(samples), (body) => checkAdapterSurvives(gateway, signedGatewayRequest(body))),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('survives garbled bodies and headers', () => {
    const valid = signedGatewayRequest(samples[0]).headers as Record<string, string>;
    fc.assert(
      fc.property(garbledBody(samples), fuzzedHeaders(['x-tributary-signature'], valid), (body, fuzzed) =>
        checkAdapterSurvives(gateway, webhookRequest(body, fuzzed)),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });
});
