import { type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplyAttempt } from '../src/reply-sink.js';
import type { RunnerOptions } from '../src/runner.js';
import { Store } from '../src/store.js';

let server: RedisHandle;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

describe('a runner delivers the replies its turns commit', () => {
  it('cannot be built without a reply sink', async () => {
    const store = Store.open({
      url: server.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('rr') },
    });
    try {
      const handler: RunnerOptions['handler'] = async () => ({ reply: '', stopReason: 'end_turn' });
      // @ts-expect-error: the reply sink is a required port, like the turn handler
      const options: Parameters<Store['runner']>[0] = { handler };
      expect(options).not.toHaveProperty('replies');
    } finally {
      await store.close();
    }
  });

  it('delivers a committed reply in order, with no event listener attached', async () => {
    const store = Store.open({
      url: server.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('rr') },
    });
    const thread = 'gateway:C:t';
    const attempts: ReplyAttempt[] = [];
    const runner = store.runner({
      sweep: false,
      handler: async (batch) => {
        const id = `${batch.id}:reply`;
        // A streamed placeholder, as the worker's stream records it before the commit: part 0.
        if (batch.messages[0]?.id === 'm1') await store.postedParts.posted(thread, id, 0, 'placeholder');
        return {
          reply: 'answer',
          stopReason: 'end_turn',
          outbound: [{ id, payload: `answer to ${batch.messages.map((m) => m.id).join(',')}` }],
        };
      },
      replies: {
        async deliver(attempt) {
          attempts.push(attempt);
          return attempt.posted.has(0) ? undefined : { part: 0, messageId: `posted-${attempt.id}` };
        },
      },
    });
    await runner.start();
    try {
      await store.queue.intake.enqueue(thread, { id: 'm1', body: 'first' });
      await waitFor(() => attempts.length === 1, { what: 'the first reply' });
      await store.queue.intake.enqueue(thread, { id: 'm2', body: 'second' });
      await waitFor(async () => attempts.length === 2 && (await store.replies.pending(thread)).length === 0, {
        what: 'the second reply to leave the outbox',
      });
      expect(attempts.map((a) => a.payload)).toEqual(['answer to m1', 'answer to m2']);
      // The commit handed the first reply over with its placeholder: the sink edits it, posts nothing.
      expect(attempts[0]!.posted).toEqual(new Map([[0, 'placeholder']]));
      expect(attempts[1]!.posted).toEqual(new Map());
      expect(await store.replies.postedParts(thread, attempts[1]!.id)).toEqual(new Map());
    } finally {
      await runner.close();
      await store.close();
    }
  });
});
