import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngressHarness, slackHeaders, slackMessage, startIngressHarness } from './ingress-fixture.js';

let h: IngressHarness;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-rate-routes-'));
  const file = join(dir, 'routes.yaml');
  await writeFile(
    file,
    'profiles: {plain: {}}\nroutes:\n  - {name: calm, platform: slack, channel: C0CALM, profile: plain, messagesPerMinute: 2}\n',
  );
  h = await startIngressHarness({ env: { ROUTES_FILE: file, RATE_LIMIT_PER_MINUTE: '100' } });
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
const post = async (channel: string) => {
  const body = slackMessage('<@UBOT> hello', { channel, ts: `1700000700.${String(++n).padStart(6, '0')}` });
  return h.post('/webhooks/slack', body, slackHeaders(body));
};

describe("a route's messagesPerMinute", () => {
  it('refuses its conversations past their own budget with 429, and leaves other conversations the default', async () => {
    expect((await post('C0CALM')).status).toBe(200);
    expect((await post('C0CALM')).status).toBe(200);
    const before = await h.queuedCount();
    const refused = await post('C0CALM');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 'rate_limited',
      error: 'more than 2 messages in this conversation a minute',
    });
    expect(await h.queuedCount()).toBe(before);

    for (let i = 0; i < 5; i++) expect((await post('C0BUSY')).status).toBe(200);
  });
});
