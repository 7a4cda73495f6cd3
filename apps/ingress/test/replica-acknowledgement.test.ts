import { startRedis, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
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
afterEach(() => h.close());

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
    /** SIGSTOP: still connected as far as the primary knows, answering nothing. */
    freeze: () => server.kill('SIGSTOP'),
    thaw: () => server.kill('SIGCONT'),
    async stop() {
      client.disconnect();
      await server.kill('SIGCONT');
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
  it('by default, acknowledges at once without a replica, and only what a replica holds once there is one', async () => {
    h = await startIngressHarness({ privateRedis: true, env: { REDIS_ACK_TIMEOUT_MS: '100' } });
    expect((await deliver('no replica yet', 'm-1')).status).toBe(200);

    const replica = await replicaOfPrimary();
    try {
      expect((await deliverUntilAcknowledged('a replica holds this one', 'm-2')).answer.status).toBe(200);
      // A replica that stops answering holds up acknowledgements: refused, never acknowledged unconfirmed.
      await replica.freeze();
      let n = 3;
      await waitFor(async () => (await deliver('the replica is frozen', `m-${n++}`)).status === 503, {
        what: 'a 503 while the only replica cannot confirm',
        timeoutMs: 10_000,
      });
    } finally {
      await replica.stop();
    }
  });

  it('REDIS_ACK_REPLICAS=0 opts out: acknowledged though the replica cannot confirm', async () => {
    h = await startIngressHarness({ privateRedis: true, env: { REDIS_ACK_REPLICAS: '0' } });
    const replica = await replicaOfPrimary();
    try {
      await replica.freeze();
      for (let n = 1; n <= 3; n++) expect((await deliver('not waited for', `m-${n}`)).status).toBe(200);
    } finally {
      await replica.stop();
    }
  });

  it('answers 503, never 500, when the primary goes down while it waits for its replica', async () => {
    h = await startIngressHarness({
      privateRedis: true,
      env: { REDIS_ACK_REPLICAS: '1', REDIS_TIMEOUT_MS: '2500', REDIS_ACK_TIMEOUT_MS: '2000' },
    });
    const replica = await replicaOfPrimary();
    try {
      await replica.freeze();
      const answer = deliver('the primary dies under this one', 'm-1');
      await waitFor(async () => /^blocked_clients:1\b/m.test(await h.redis.info('clients')), {
        what: 'the WAIT in progress',
      });
      // The answer to the write came before the kill; the WAIT pipelined behind it is aborted.
      await h.server.kill();
      const { status, body } = await answer;
      expect(body).toMatchObject({ code: 'redis_unavailable' });
      expect(status).toBe(503);
      await h.server.restart();
    } finally {
      await replica.stop();
    }
  });

  it('answers 503 while no replica confirms the write; the retry once one does is the same message', async () => {
    h = await startIngressHarness({
      privateRedis: true,
      env: { REDIS_ACK_REPLICAS: '1', REDIS_ACK_TIMEOUT_MS: '100' },
    });
    const unconfirmed = await deliver('nobody replicates this yet', 'm-1');
    expect(unconfirmed.status).toBe(503);
    expect(unconfirmed.body).toMatchObject({ code: 'redis_unavailable' });
    expect(String(unconfirmed.body.error)).toMatch(/replicated the write to 0 of 1 replicas/);
    expect(unconfirmed.headers.get('retry-after')).toBe('1');
    const errorOf = (line: Record<string, unknown>) =>
      (line.err as { message?: string } | undefined)?.message;
    expect(
      h.logs.some((line) => (line.level as number) >= 40 && /replicas/.test(String(errorOf(line)))),
    ).toBe(true);
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
