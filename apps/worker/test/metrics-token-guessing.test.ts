import { request } from 'node:http';
import { createMetrics } from '@tributary/observability';
import { FAILED_AUTH_PER_MINUTE } from '@tributary/platforms';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHealthServer } from '../src/health/health-server.js';

const METRICS_TOKEN = 'worker-metrics-token-0123';
let server: FastifyInstance;
let port: number;
beforeAll(async () => {
  server = await startHealthServer(
    { port: 0, host: '127.0.0.1', metricsToken: METRICS_TOKEN },
    createMetrics(),
    {
      notAccepting: () => undefined,
      redis: async () => undefined,
      consuming: () => true,
      agentProblem: () => undefined,
    },
  );
  port = (server.server.address() as { port: number }).port;
});
afterAll(() => server.close());

interface Scrape {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** A scrape over real HTTP from `from`, one of the loopback addresses. */
function scrape(token: string, from = '127.0.0.1'): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        localAddress: from,
        headers: { authorization: `Bearer ${token}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

it('answers 429 with Retry-After once an address has sent too many wrong tokens; the right token and other addresses still get in', async () => {
  const statuses: number[] = [];
  for (let i = 0; i <= FAILED_AUTH_PER_MINUTE + 5; i++) {
    statuses.push((await scrape(`guess-${i}-of-the-same-length-0`)).status);
  }
  expect(statuses.slice(0, FAILED_AUTH_PER_MINUTE)).toEqual(Array(FAILED_AUTH_PER_MINUTE).fill(401));
  expect(new Set(statuses.slice(FAILED_AUTH_PER_MINUTE))).toEqual(new Set([429]));

  const refused = await scrape('one-more-guess-of-the-same-len');
  expect(refused.status).toBe(429);
  expect(Number(refused.retryAfter)).toBeGreaterThan(0);
  expect(JSON.parse(refused.body)).toMatchObject({ code: 'rate_limited' });

  const allowed = await scrape(METRICS_TOKEN);
  expect(allowed.status).toBe(200);
  expect(allowed.body).toContain('tributary_');
  expect((await scrape('a-guess-from-somewhere-else-00', '127.0.0.2')).status).toBe(401);
});
