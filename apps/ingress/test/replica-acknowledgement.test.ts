import { startRedis, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  startIngressHarness,
} from './ingress-fixture.js';

// REDIS_ACK_REPLICAS: a message is acknowledged only once a replica holds it (WAIT), so a failover
// right after the 200 cannot lose it; without the replica's confirmation in time the answer is 503.
let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({
    privateRedis: true,
    env: { REDIS_ACK_REPLICAS: '1', REDIS_ACK_TIMEOUT_MS: '100' },
  });
});
afterAll(() => h.close());

async function replicaOfPrimary() {
  const server = await startRedis({ private: true });
  const client = new Redis(server.url);
  const primary = new URL(h.server.url);
  // The harness's servers require a password; a replica gives the primary's.
  if (primary.password) await client.config('SET', 'masterauth', decodeURIComponent(primary.password));
  await client.replicaof(primary.hostname, Number(primary.port));
  await waitFor(async () => /master_link_status:up/.test(await client.info('replication')), {
    what: 'the replica to sync',
  });
  return {
    async stop() {
      client.disconnect();
      // A replica's SIGTERM shutdown may wait on its own AOF work; nothing of it is needed afterwards.
      await server.kill();
      await server.stop();
    },
  };
}

function deliver(text: string, messageId: string) {
  const body = gatewayEvent(text, { message_id: messageId });
  return h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
}

/**
 * Delivers as a platform does: again after a 503. A replica that has synced may still miss a WAIT on a
 * machine busy with the whole suite; the platform's retry is then the same message, stored already.
 */
async function deliverUntilAcknowledged(text: string, messageId: string) {
  let answer = await deliver(text, messageId);
  let attempts = 1;
  while (answer.status === 503 && attempts < 20) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    answer = await deliver(text, messageId);
    attempts++;
  }
  return { answer, attempts };
}

describe('acknowledgement by a replica', () => {
  it('answers 503 while no replica confirms the write; the retry once one does is the same message', async () => {
    const unconfirmed = await deliver('nobody replicates this yet', 'm-1');
    expect(unconfirmed.status).toBe(503);
    expect(unconfirmed.body).toMatchObject({ code: 'redis_unavailable' });
    expect(String(unconfirmed.body.error)).toMatch(/replicated the write to 0 of 1 replicas/);
    expect(unconfirmed.headers.get('retry-after')).toBe('1');
    expect(h.logs.some((line) => (line.level as number) >= 40 && /replicas/.test(String(line.reason)))).toBe(
      true,
    );
    expect(await h.metrics()).toMatch(
      /tributary_ingress_requests_total\{[^}]*outcome="unavailable"[^}]*\} 1/,
    );

    const replica = await replicaOfPrimary();
    try {
      // The platform's retry: the first delivery is on the primary already, so it is the duplicate of
      // it, now confirmed by the replica and acknowledged; nothing is queued twice.
      const retried = await deliverUntilAcknowledged('nobody replicates this yet', 'm-1');
      expect(retried.answer.status).toBe(200);
      expect(retried.answer.body).toMatchObject({ ok: true, outcome: 'duplicate' });
      const next = await deliverUntilAcknowledged('a replica holds this one', 'm-2');
      expect(next.answer.status).toBe(200);
      // New when the first delivery was confirmed; else the retry found it stored already.
      const outcome = next.attempts === 1 ? 'accepted' : 'duplicate';
      expect(next.answer.body).toMatchObject({ ok: true, outcome });
      expect(await h.queuedCount()).toBe(2);
    } finally {
      await replica.stop();
    }
  });
});
