import { afterEach, describe, expect, it } from 'vitest';
import { message, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const dispatches = (harness: WorkerHarness) =>
  harness.logs.filter((l) => l.msg === 'dispatch').map((l) => [l.sessionPath, l.sessionId]);

describe('session continuity across worker restarts and resets', () => {
  it('resumes the thread’s session on a new worker, and starts a fresh one after a reset', async () => {
    h = await startHarness();
    await h.send('th', message('first'));
    await waitForReplies(h, 'th', 1);
    await h.restartWorker();

    await h.send('th', message('after restart'));
    await waitForReplies(h, 'th', 2);
    await h.worker.controls.reset('th');
    await h.send('th', message('after reset'));
    await waitForReplies(h, 'th', 3);
    await h.send('th', message('same worker again'));
    await waitForReplies(h, 'th', 4);

    const [first, resumed, fresh, live] = dispatches(h);
    expect(first![0]).toBe('new');
    expect(resumed).toEqual(['resumed', first![1]]);
    expect(fresh![0]).toBe('new');
    expect(fresh![1]).not.toBe(first![1]);
    expect(live).toEqual(['live', fresh![1]]);
  });
});
