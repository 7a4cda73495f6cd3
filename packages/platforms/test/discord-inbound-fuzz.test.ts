import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  CHANNEL,
  forwarded,
  forwardedBody,
  interactions,
  signedForward,
  signedInteraction,
  slashCommand,
  THREAD,
} from './discord-inbound-fixtures.js';
import {
  checkAdapterSurvives,
  FUZZ_RUNS,
  fuzzedHeaders,
  garbledBody,
  type Json,
  mutatedBody,
} from './fuzz-inbound.js';
import { NOW, webhookRequest } from './support-inbound.js';

const interactionSamples: Json[] = [
  { id: '1', application_id: '2', type: 1, token: 't', version: 1 },
  slashCommand('cancel'),
  slashCommand('reset', { channel_id: THREAD, channel: { id: THREAD, type: 11, parent_id: CHANNEL } }),
];
const forwardedSamples = [
  forwardedBody(),
  forwardedBody(
    {
      channel_id: THREAD,
      attachments: [
        { id: '1', filename: 'a.png', url: 'https://cdn.example/a.png', content_type: 'image/png' },
      ],
      mentions: [{ id: '5' }],
    },
    { id: THREAD, parent_id: CHANNEL, type: 11 },
  ),
] as unknown as Json[];

describe('Discord adapters under fuzzing', () => {
  it('interactions survive mutated, validly signed bodies', () => {
    fc.assert(
      fc.property(mutatedBody(interactionSamples), (body) =>
        checkAdapterSurvives(interactions, signedInteraction(body.toString())),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('interactions survive garbled bodies and headers', () => {
    const valid = signedInteraction(interactionSamples[0]).headers as Record<string, string>;
    const headers = fuzzedHeaders(['x-signature-ed25519', 'x-signature-timestamp'], valid);
    fc.assert(
      fc.property(garbledBody(interactionSamples), headers, fc.integer(), (body, fuzzed, skew) =>
        checkAdapterSurvives(interactions, webhookRequest(body, fuzzed, NOW + skew)),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('forwarded messages survive mutated, validly signed bodies', () => {
    fc.assert(
      fc.property(mutatedBody(forwardedSamples), (body) =>
        checkAdapterSurvives(forwarded, signedForward(body)),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('forwarded messages survive garbled bodies and headers', () => {
    const valid = signedForward(forwardedSamples[0]).headers as Record<string, string>;
    fc.assert(
      fc.property(
        garbledBody(forwardedSamples),
        fuzzedHeaders(['x-tributary-signature'], valid),
        (body, fuzzed) => checkAdapterSurvives(forwarded, webhookRequest(body, fuzzed)),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });
});
