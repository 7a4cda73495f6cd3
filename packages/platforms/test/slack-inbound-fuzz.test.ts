import { describe } from 'vitest';
import { fuzzAdapter, type Json } from './fuzz-inbound.js';
import { signedSlackRequest, slack, slackMessage, TS } from './slack-inbound-fixtures.js';

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
  fuzzAdapter({
    adapter: slack,
    samples,
    sign: (body) => signedSlackRequest(body.toString()),
    headerNames,
    timestamped: true,
  });
});
