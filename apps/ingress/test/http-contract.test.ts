import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../src/errors.js';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  startIngressHarness,
  telegramHeaders,
  telegramUpdate,
} from './ingress-fixture.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({ env: { METRICS_TOKEN, ADMIN_TOKEN: 'admin-token-for-tests-0123' } });
});
afterAll(() => h.close());

/** A raw request, so URLs Fetch would normalise or refuse reach the server as written. */
function raw(path: string, base = h.url): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/`, { path, method: 'GET' }, (res) => {
      let text = '';
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const answerFor = (code: keyof typeof ERROR_CATALOG) => ({
  status: ERROR_CATALOG[code].status,
  body: { error: expect.any(String), code },
});

describe('webhook media types', () => {
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data'])(
    'refuses a correctly signed %s body with 415 and queues nothing',
    async (type) => {
      const body = gatewayEvent('hello');
      const answer = await h.post('/webhooks/gateway', body, {
        ...hmacHeaders(SECRETS.GATEWAY_SECRET, body),
        'content-type': type,
      });
      expect({ status: answer.status, body: answer.body }).toEqual(answerFor('unsupported_media_type'));
      expect(await h.keyCount()).toBe(0);
    },
  );

  it('takes application/json with a charset, as platforms send it', async () => {
    const body = telegramUpdate('@tributary_bot hello', 9001);
    const answer = await h.post('/webhooks/telegram', body, {
      ...telegramHeaders(),
      'content-type': 'application/json; charset=utf-8',
    });
    expect(answer.status).toBe(200);
  });
});

describe("Fastify's and Node's own refusals", () => {
  it('answers a URL that is not valid percent-encoding with bad_request', async () => {
    expect(await raw('/%')).toEqual(answerFor('bad_request'));
  });

  it('answers an over-long path parameter with uri_too_long', async () => {
    // The admin API's routes are the ones with parameters; it answers in the same catalogue.
    expect(await raw(`/admin/threads/${'t'.repeat(200)}`, h.adminUrl)).toEqual(answerFor('uri_too_long'));
  });

  it('answers a URL over the header limit with headers_too_large', async () => {
    expect(await raw(`/livez?${'x'.repeat(20_000)}`)).toEqual(answerFor('headers_too_large'));
  });

  it('answers an unknown route or method with not_found', async () => {
    expect(await raw('/nowhere')).toEqual(answerFor('not_found'));
    const answer = await fetch(`${h.url}/livez`, { method: 'DELETE' });
    expect({ status: answer.status, body: await answer.json() }).toEqual(answerFor('not_found'));
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  it('needs the bearer token', async () => {
    const scrape = (authorization?: string) =>
      fetch(`${h.adminUrl}/metrics`, authorization ? { headers: { authorization } } : {});
    const refused = await scrape();
    expect({ status: refused.status, body: await refused.json() }).toEqual(answerFor('unauthorized'));
    expect((await scrape('Bearer wrong-token-of-some-length')).status).toBe(401);
    const allowed = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('tributary_ingress_requests_total');
  });

  it('leaves health checks open', async () => {
    expect((await fetch(`${h.url}/livez`)).status).toBe(200);
  });
});
