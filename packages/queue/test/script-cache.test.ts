import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  // Its own Redis: flushing the script cache of a shared one would reach other suites.
  f = await queueFixture({ private: true });
});
afterAll(() => f.close());

describe('scripts', () => {
  it('run again after Redis forgot them, as a restarted Redis or a promoted replica has', async () => {
    const { queue } = await f.make();
    expect(await queue.intake.enqueue('th', { id: 'a', body: 'first' })).toMatchObject({
      outcome: 'accepted',
    });
    await f.redis.script('FLUSH');
    // NOSCRIPT: the script is sent whole once, which caches it again for the next call.
    expect(await queue.intake.enqueue('th', { id: 'b', body: 'second' })).toMatchObject({
      outcome: 'accepted',
    });
    expect(await queue.intake.enqueue('th', { id: 'c', body: 'third' })).toMatchObject({
      outcome: 'accepted',
    });
    expect((await queue.admin.state('th')).backlog).toBe(3);
  });
});
