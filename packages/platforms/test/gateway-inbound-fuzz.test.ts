import { describe } from 'vitest';
import { fuzzAdapter, type Json } from './fuzz-inbound.js';
import {
  gateway,
  gatewayEvent,
  inChannel,
  signedGatewayRequest,
  withAttachments,
} from './gateway-inbound-fixtures.js';

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
  fuzzAdapter({
    adapter: gateway,
    samples,
    sign: signedGatewayRequest,
    headerNames: ['x-tributary-signature'],
  });
});
