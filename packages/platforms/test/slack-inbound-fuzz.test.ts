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
import { signedSlackRequest, slack, slackMessage, TS } from './slack-inbound-fixtures.js';
import { NOW, webhookRequest } from './support-inbound.js';

const samples: Json[] = [
  slackMessage(),
  slackMessage({
    thread_ts: TS,
    ts: '1735723900.000300',
    user_profile: { name: 'alice', display_name: 'Al' },
  }),
  slackMessage({
    subtype: 'file_share',
    files: [{ id: 'F1', name: 'a.txt', mimetype: 'text/plain', url_private: 'https://x/F1' }],
  }),
  slackMessage({ subtype: 'bot_message', user: undefined, bot_id: 'B1' }) as Json,
  { type: 'url_verification', challenge: 'abc' },
];
const headerNames = ['x-slack-request-timestamp', 'x-slack-signature'];

describe('Slack adapter under fuzzing', () => {
  it('survives mutated bodies with valid signatures', () => {
    fc.assert(
      fc.property(mutatedBody(samples), (body) =>
        checkAdapterSurvives(slack, signedSlackRequest(body.toString())),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('survives garbled bodies and headers', () => {
    const valid = signedSlackRequest(slackMessage()).headers as Record<string, string>;
    fc.assert(
      fc.property(
        garbledBody(samples),
        fuzzedHeaders(headerNames, valid),
        fc.integer(),
        (body, headers, skew) => checkAdapterSurvives(slack, webhookRequest(body, headers, NOW + skew)),
      ),
      { numRuns: FUZZ_RUNS },
    );
  });
});
