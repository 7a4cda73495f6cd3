import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlMessage } from '../src/stores/control-channel.js';
import { ThreadControls } from '../src/stores/thread-controls.js';
import { keysOf } from '../src/testing.js';
import { enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

async function make() {
  const { queue } = await f.make();
  return { queue, controls: new ThreadControls(f.redis, (thread) => keysOf(queue, thread), queue.config) };
}

describe('a control command, once per delivery', () => {
  it('is applied by one of its deliveries, however many race', async () => {
    const { queue, controls } = await make();
    await enqueueAll(queue, 'th', ['a', 'b']);
    const answers = await Promise.all(Array.from({ length: 8 }, () => controls.cancelAll('th', 'd-1')));
    expect(answers.filter((answer) => answer !== 'duplicate')).toEqual([{ dropped: 2 }]);
  });

  it('is remembered for a thread Redis knew nothing of, so its retry leaves a later message alone', async () => {
    const { queue, controls } = await make();
    expect(await controls.reset('ghost', 'd-2')).toBeUndefined();
    const k = keysOf(queue, 'ghost');
    expect(await f.redis.exists(k.state, k.inbox, k.history)).toBe(0);
    await enqueueAll(queue, 'ghost', ['after the reset']);
    expect(await controls.reset('ghost', 'd-2')).toBe('duplicate');
    expect(await queue.admin.state('ghost')).toMatchObject({ backlog: 1, generation: 0 });
  });

  it('publishes one cancel for a retried /cancel', async () => {
    const { controls } = await make();
    const heard: ControlMessage[] = [];
    const subscription = await controls.subscribe((message) => heard.push(message));
    try {
      expect(await controls.cancel('th', 'd-3')).toEqual({ wasRunning: false });
      expect(await controls.cancel('th', 'd-3')).toBe('duplicate');
      // Published after the retry: a cancel of the retry's would have come before it.
      await controls.cancel('marker');
      await waitFor(() => heard.some((m) => m.thread === 'marker'), { what: 'the marker cancel' });
      expect(heard).toEqual([
        { thread: 'th', action: 'cancel' },
        { thread: 'marker', action: 'cancel' },
      ]);
    } finally {
      await subscription.close();
    }
  });

  it('without a delivery (an admin action sent without an Idempotency-Key) applies every time', async () => {
    const { queue, controls } = await make();
    await enqueueAll(queue, 'th', ['a']);
    expect(await controls.cancelAll('th')).toEqual({ dropped: 1 });
    await enqueueAll(queue, 'th', ['b'], 2);
    expect(await controls.cancelAll('th')).toEqual({ dropped: 1 });
    // The dedup window holds the two messages' keys only.
    expect(await f.redis.hlen(keysOf(queue, 'th').dedup)).toBe(2);
  });
});
