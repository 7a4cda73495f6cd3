import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { percentile } from './stats.js';

/** Throughput and latency of one closed-loop run. */
export interface LoadResult {
  requests: number;
  /** 503 answers sent again (only when the run allows it). */
  retried: number;
  perSecond: number;
  p50: number;
  p99: number;
}

export interface WebhookRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * POSTs one request on `pool` until it is answered 200 and resolves with the ms from sending to that
 * answer and the 503s sent again on the way (only when `retryUnavailable`, as a platform would retry).
 * Any other answer fails it, so a figure never counts refusals.
 */
export async function postWebhook(
  pool: Pool,
  origin: string,
  { path, headers, body }: WebhookRequest,
  retryUnavailable: boolean,
): Promise<{ ms: number; retried: number }> {
  const sent = performance.now();
  let retried = 0;
  for (;;) {
    const answer = await pool.request({ origin, path, method: 'POST', headers, body });
    const text = await answer.body.text();
    if (answer.statusCode === 200) return { ms: performance.now() - sent, retried };
    if (answer.statusCode !== 503 || !retryUnavailable) {
      throw new Error(`${path} answered ${answer.statusCode}: ${text}`);
    }
    retried++;
  }
}

/**
 * Keeps `connections` requests in flight against `origin` for `seconds` (closed loop, kept-alive
 * connections, no pipelining) and reports requests per second and latency percentiles. `next(i)`
 * gives the i-th request; a non-2xx answer fails the run, so a figure never counts refusals. With
 * `perSecond`, request i is not sent before i / perSecond s into the run: a paced load, because CPU
 * per request at a rate below saturation is not what it is at saturation.
 */
export async function closedLoop(
  origin: string,
  connections: number,
  seconds: number,
  /** The i-th request; undefined ends the run early. */
  next: (i: number) => WebhookRequest | undefined,
  /** Send a request that got 503 again, as a platform would, instead of failing the run. */
  retryUnavailable = false,
  perSecond = Number.POSITIVE_INFINITY,
): Promise<LoadResult> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let issued = 0;
  let retried = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const i = issued++;
      const request = next(i);
      if (request === undefined) return;
      const due = started + (i * 1000) / perSecond - performance.now();
      if (due > 0) await sleep(due);
      const answered = await postWebhook(pool, origin, request, retryUnavailable);
      retried += answered.retried;
      latencies.push(answered.ms);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return {
    requests: latencies.length,
    retried,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}
