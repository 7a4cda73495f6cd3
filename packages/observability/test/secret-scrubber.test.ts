import { describe, expect, it } from 'vitest';
import { SCRUBBED, SecretScrubber } from '../src/secret-scrubber.js';

const scrubber = new SecretScrubber(['canary-opaque-7f3a9c2e', 'short']);

describe('SecretScrubber', () => {
  it.each([
    ['invalid x-api-key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx-YZ0123', 'invalid x-api-key [redacted]'],
    ['OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx', 'OPENAI_API_KEY=[redacted]'],
    ['key AIzaSyA1234567890abcdefghijklmnopqrstu rejected', 'key [redacted] rejected'],
    ['push with ghp_abcdefghijklmnopqrstuvwxyz0123 failed', 'push with [redacted] failed'],
    ['slack xoxb-123456789012-abcdefghijkl', 'slack [redacted]'],
    ['aws AKIAABCDEFGHIJKLMNOP here', 'aws [redacted] here'],
    ['bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 gone', 'bot [redacted] gone'],
    [
      'GET https://files.example/file/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/photo.jpg: 404',
      'GET https://files.example/file/bot[redacted]/photo.jpg: 404',
    ],
    ['Authorization: Bearer abc.def-ghi_jkl', 'Authorization: Bearer [redacted]'],
    ['sent bearer abcdefgh12345 to the API', 'sent bearer [redacted] to the API'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N', 'jwt [redacted]'],
    [
      'connecting to redis://default:hunter2hunter@redis:6379/0',
      'connecting to redis://default:[redacted]@redis:6379/0',
    ],
    ['{"apiKey": "opaque-value-42"}', '{"apiKey": "[redacted]"}'],
    ['password=letmein99 user=ada', 'password=[redacted] user=ada'],
    ['the value canary-opaque-7f3a9c2e leaked', 'the value [redacted] leaked'],
  ])('scrubs %j', (input, expected) => {
    expect(scrubber.scrub(input)).toBe(expected);
  });

  it('leaves ordinary agent output alone', () => {
    const text = 'Error: ENOENT: no such file or directory, open /workspace/t1/README.md (token count 42)';
    expect(scrubber.scrub(text)).toBe(text);
  });

  it('does not blank short known values, which would hit ordinary words', () => {
    expect(scrubber.scrub('a short reply')).toBe('a short reply');
  });

  it('holds back the start of a known value while a streamed text may go on with the rest', () => {
    const streamed = 'the key is canary-opaque-7f3a9c2e, and canary-opaq';
    expect(scrubber.scrubStreamed(streamed, 1000)).toBe(`the key is ${SCRUBBED}, and `);
    expect(scrubber.scrubStreamed('ends with c', 1000)).toBe('ends with ');
    // Below the minimum length a value is nobody's secret: nothing is held back for it.
    expect(scrubber.scrubStreamed('a sho', 1000)).toBe('a sho');
  });

  it('shows at most the start it is asked for, scrubbed, whatever the length of the text', () => {
    const long = `${'x'.repeat(20)}canary-opaque-7f3a9c2e${'y'.repeat(1_000_000)}`;
    expect(scrubber.scrubStreamed(long, 40)).toBe(`${'x'.repeat(20)}${SCRUBBED}${'y'.repeat(10)}`);
    // A secret that straddles the end of what is shown is still blanked, not cut into a visible half.
    expect(scrubber.scrubStreamed(long, 30)).toBe(`${'x'.repeat(20)}${SCRUBBED}`);
  });

  it('blanks a known value that contains another known value whole', () => {
    const nested = new SecretScrubber(['secret-part-1234', 'prefix-secret-part-1234-suffix']);
    expect(nested.scrub('x prefix-secret-part-1234-suffix y')).toBe(`x ${SCRUBBED} y`);
  });
});
