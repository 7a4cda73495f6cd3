import { describe } from 'vitest';
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
import { fuzzAdapter, type Json } from './fuzz-inbound.js';

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

describe('Discord interactions under fuzzing', () => {
  fuzzAdapter({
    adapter: interactions,
    samples: interactionSamples,
    sign: (body) => signedInteraction(body.toString()),
    headerNames: ['x-signature-ed25519', 'x-signature-timestamp'],
    timestamped: true,
  });
});

describe('Discord forwarded messages under fuzzing', () => {
  fuzzAdapter({
    adapter: forwarded,
    samples: forwardedSamples,
    sign: signedForward,
    headerNames: ['x-tributary-signature'],
  });
});
