import { type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeliveryOutcome, ReplyLoop } from '../src/reply-loop.js';
import type { ReplyAttempt, ReplySink } from '../src/reply-sink.js';
import { Store } from '../src/store.js';

let server: RedisHandle;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

/** A sink that fails while `down` is set, and records what it took (the payload is the reply's text). */
function flakySink() {
  const sink = {
    down: false,
    taken: [] as string[],
    refused: 0,
    async deliver(attempt: ReplyAttempt) {
      if (sink.down) {
        sink.refused++;
        throw new Error('platform down');
      }
      sink.taken.push(attempt.payload);
      return undefined;
    },
  } satisfies ReplySink & Record<string, unknown>;
  return sink;
}

/** Thread `th` commits one more batch, `text` its reply in the outbox. */
async function commitReply(store: Store, id: string, text: string): Promise<void> {
  await store.queue.intake.enqueue('th', { id, body: 'x' });
  const claim = await store.queue.turns.claim('th', (await store.queue.admin.state('th')).epoch, 'worker');
  if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
  await store.queue.turns.commit(claim.batch.lease, {
    reply: text,
    stopReason: 'end_turn',
    outbound: [{ id: `${claim.batch.id}:reply`, payload: text }],
  });
}

/** A store whose thread `th` committed one batch per text, each with its reply in the outbox. */
async function committed(texts: string[]) {
  const store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('rd') },
  });
  for (const [i, text] of texts.entries()) await commitReply(store, `m${i}`, text);
  return store;
}

function deliverer(store: Store, sink: ReplySink, horizonMs = 60_000) {
  const outcomes: DeliveryOutcome[] = [];
  const delivery = new ReplyLoop({
    outbox: store.replies,
    parts: store.postedParts,
    sink,
    owner: 'me',
    delivery: { retry: { horizonMs, firstDelayMs: 20, maxDelayMs: 40 }, concurrency: 2, lockMs: 5_000 },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  return { delivery, outcomes };
}

describe('reply delivery from the outbox', () => {
  it('delivers committed replies in commit order, once each, after the platform comes back', async () => {
    const store = await committed(['first', 'second']);
    const sink = flakySink();
    sink.down = true;
    const { delivery, outcomes } = deliverer(store, sink);
    // Only the first attempt is kicked: the retries are the deliverer's own.
    delivery.deliver('th');
    try {
      await waitFor(() => outcomes.filter((o) => o === 'retried').length >= 3, { what: 'retries' });
      expect(sink.taken).toEqual([]);
      expect((await store.replies.pending('th')).map((r) => r.id.endsWith(':reply'))).toEqual([true, true]);
      sink.down = false;
      await waitFor(() => sink.taken.length === 2, { what: 'both replies' });
      await waitFor(async () => (await store.replies.pending('th')).length === 0, {
        what: 'an empty outbox',
      });
      expect(sink.taken).toEqual(['first', 'second']);
      expect(outcomes.filter((o) => o === 'delivered')).toHaveLength(2);
    } finally {
      await delivery.stop();
      await store.close();
    }
  });

  it('delivers a reply committed after the drain’s last look, kicked while it was still draining', async () => {
    const store = await committed(['one']);
    const sink = flakySink();
    const { delivery } = deliverer(store, sink);
    // Right after the delivery of `one` found the outbox empty, another turn commits and kicks.
    const done = store.replies.done.bind(store.replies);
    let late = false;
    store.replies.done = async (...args) => {
      const outcome = await done(...args);
      if (!late) {
        late = true;
        await commitReply(store, 'm-late', 'two');
        delivery.deliver('th');
      }
      return outcome;
    };
    try {
      delivery.deliver('th');
      // No sweeper runs here: only the deliverer itself can pick `two` up.
      await waitFor(() => sink.taken.length === 2, { what: 'the late reply' });
      expect(sink.taken).toEqual(['one', 'two']);
    } finally {
      await delivery.stop();
      await store.close();
    }
  });

  it('delivers a reply once when a sweep offers the thread as its commit hands it over', async () => {
    const store = await committed(['just once']);
    const sink = flakySink();
    const { delivery } = deliverer(store, sink);
    try {
      // The sweep's offer comes first; the commit's hand-over finds the thread being delivered.
      delivery.offer(['th']);
      delivery.deliver('th');
      await waitFor(async () => (await store.replies.pending('th')).length === 0, {
        what: 'an empty outbox',
      });
      // Long enough for a second delivery, which would follow the first one at once.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(sink.taken).toEqual(['just once']);
    } finally {
      await delivery.stop();
      await store.close();
    }
  });

  it('keeps to the platform’s Retry-After when the sweeper offers the thread during a failing attempt', async () => {
    const store = await committed(['slow down']);
    let attempts = 0;
    const sink: ReplySink = {
      async deliver() {
        attempts++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw Object.assign(new Error('rate limited'), { retryAfterMs: 5_000 });
      },
    };
    const { delivery, outcomes } = deliverer(store, sink);
    try {
      delivery.deliver('th');
      // A sweep pass finds the thread due while the attempt runs, and so does another turn's commit.
      await new Promise((resolve) => setTimeout(resolve, 10));
      delivery.offer(['th']);
      delivery.deliver('th');
      await waitFor(() => outcomes.includes('retried') || undefined, { what: 'the failed attempt' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(attempts).toBe(1);
      expect((await store.replies.pending('th'))[0]).toMatchObject({ attempts: 1 });
    } finally {
      await delivery.stop();
      await store.close();
    }
  });

  it('keeps a reply undeliverable past the horizon as a dead reply; a re-drive delivers it once', async () => {
    const store = await committed(['lost for now']);
    const sink = flakySink();
    sink.down = true;
    const { delivery, outcomes } = deliverer(store, sink, 100);
    delivery.deliver('th');
    try {
      await waitFor(() => outcomes.includes('dead'), { what: 'the reply to be given up' });
      const [dead] = await store.replies.dead('th');
      // Every attempt counts, the one that gave it up included; the reason is the platform's error.
      expect(dead).toMatchObject({
        reason: 'platform down',
        lastError: 'platform down',
        attempts: sink.refused,
      });
      const listed = await store.listing.deadReplies(undefined, 10);
      expect(listed.items.map((row) => [row.thread, row.id, row.attempts])).toEqual([
        ['th', dead!.id, sink.refused],
      ]);
      expect((await store.listing.summary()).deadReplyReasons).toEqual([
        { reason: 'platform down', count: 1 },
      ]);
      sink.down = false;
      expect(await store.admin.redriveReply('th', dead!.id)).toBe(true);
      // A sweep pass reports the re-driven reply as due (packages/queue's sweeper test checks it does).
      delivery.offer(['th']);
      await waitFor(() => sink.taken.length === 1, { what: 'the re-driven reply' });
      expect(sink.taken).toEqual(['lost for now']);
      expect(await store.replies.dead('th')).toEqual([]);
      expect((await store.listing.deadReplies(undefined, 10)).items).toEqual([]);
      expect((await store.listing.summary()).deadReplyReasons).toEqual([]);
      expect(await store.admin.redriveReply('th', dead!.id)).toBe(false);
    } finally {
      await delivery.stop();
      await store.close();
    }
  });

  it('lets one deliverer hold a thread at a time', async () => {
    const store = await committed(['only once']);
    try {
      const first = await store.replies.take('th', 'a', 5_000);
      expect(first.kind).toBe('reply');
      expect(await store.replies.take('th', 'b', 5_000)).toEqual({ kind: 'busy' });
      if (first.kind !== 'reply') throw new Error('no reply');
      const last = { part: 1, messageId: 'platform-2' };
      await store.replies.recordPart('th', first.reply.id, 0, 'platform-1');
      // A deliverer that lost the lock still records the last part it posted, for the one that holds it.
      expect(await store.replies.done('th', 'b', first.reply.id, { last })).toEqual({ kind: 'lost' });
      expect(await store.replies.postedParts('th', first.reply.id)).toEqual(
        new Map([
          [0, 'platform-1'],
          [1, 'platform-2'],
        ]),
      );
      expect(await store.replies.done('th', 'a', first.reply.id, { last })).toEqual({ kind: 'empty' });
      // Delivered: its parts record goes with it, so nothing of it outlives the thread's idle time.
      expect(await store.replies.postedParts('th', first.reply.id)).toEqual(new Map());
      expect(await store.replies.take('th', 'b', 5_000)).toEqual({ kind: 'empty' });
    } finally {
      await store.close();
    }
  });
});
