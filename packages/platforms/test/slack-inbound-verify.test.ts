import { describe, expect, it } from 'vitest';
import { SlackInboundAdapter, slackSignature } from '../src/index.js';
import { signedSlackRequest, slack, slackMessage } from './slack-inbound-fixtures.js';
import { NOW, webhookRequest } from './support-inbound.js';

// Slack's published example ("Verifying requests from Slack"): a slash-command body, form-encoded.
const PUBLISHED = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  body:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V' +
    '&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=' +
    '&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN' +
    '&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};

const published = new SlackInboundAdapter({ signingSecret: PUBLISHED.secret });

function publishedRequest(overrides: {
  body?: string;
  headers?: Record<string, string | undefined>;
  now?: number;
}) {
  return webhookRequest(
    overrides.body ?? PUBLISHED.body,
    {
      'x-slack-request-timestamp': PUBLISHED.timestamp,
      'x-slack-signature': PUBLISHED.signature,
      ...overrides.headers,
    },
    overrides.now ?? Number(PUBLISHED.timestamp) * 1000 + 2_000,
  );
}

describe('Slack request verification', () => {
  it("computes Slack's published example signature", () => {
    expect(slackSignature(PUBLISHED.secret, PUBLISHED.timestamp, PUBLISHED.body)).toBe(PUBLISHED.signature);
  });

  it("accepts Slack's published example request", () => {
    expect(published.verify(publishedRequest({}))).toEqual({ ok: true });
  });

  it.each([
    ['a changed body', { body: PUBLISHED.body.replace('roadrunner', 'coyote') }, 'does not match'],
    ['a body with one more byte', { body: `${PUBLISHED.body} ` }, 'does not match'],
    [
      'a timestamp changed after signing',
      { headers: { 'x-slack-request-timestamp': '1531420619' } },
      'does not match',
    ],
    ['a stale timestamp', { now: (Number(PUBLISHED.timestamp) + 301) * 1000 }, 'away from now'],
    ['a timestamp from the future', { now: (Number(PUBLISHED.timestamp) - 301) * 1000 }, 'away from now'],
    ['no signature header', { headers: { 'x-slack-signature': undefined } }, 'missing x-slack-signature'],
    [
      'no timestamp header',
      { headers: { 'x-slack-request-timestamp': undefined } },
      'missing x-slack-request',
    ],
    [
      'a non-numeric timestamp',
      { headers: { 'x-slack-request-timestamp': '1531420618.5' } },
      'not unix seconds',
    ],
    [
      'a signature of another version',
      { headers: { 'x-slack-signature': PUBLISHED.signature.replace('v0=', 'v1=') } },
      'does not match',
    ],
    [
      'a truncated signature',
      { headers: { 'x-slack-signature': PUBLISHED.signature.slice(0, -1) } },
      'does not match',
    ],
    [
      'an upper-case signature',
      { headers: { 'x-slack-signature': PUBLISHED.signature.toUpperCase() } },
      'does not match',
    ],
  ])('rejects %s', (_label, overrides, reason) => {
    const verification = published.verify(publishedRequest(overrides));
    expect(verification.ok).toBe(false);
    expect(verification.ok === false && verification.reason).toContain(reason);
  });

  it('accepts a timestamp exactly 300 s old', () => {
    expect(published.verify(publishedRequest({ now: (Number(PUBLISHED.timestamp) + 300) * 1000 }))).toEqual({
      ok: true,
    });
  });

  it('rejects a request signed with another secret', () => {
    const request = signedSlackRequest(slackMessage());
    expect(slack.verify(request)).toEqual({ ok: true });
    expect(published.verify({ ...request, now: NOW }).ok).toBe(false);
  });

  it('refuses to be built with an empty signing secret', () => {
    expect(() => new SlackInboundAdapter({ signingSecret: '' })).toThrow('signingSecret');
  });
});
