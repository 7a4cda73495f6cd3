import { waitFor } from '@tributary/testkit';
import { afterEach, expect, it } from 'vitest';
import { message, metric, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('counts every agent process it starts in tributary_agent_process_starts_total', async () => {
  h = await startHarness();
  for (const thread of ['th-1', 'th-2']) {
    await h.send(thread, message(`hello ${thread}`));
    await waitForReplies(h, thread, 1);
  }
  // The warm spare that replaced the one a thread took is counted once it has initialized.
  await waitFor(() => h!.worker.pool.readySpares === 1, { what: 'the replacement spare' });
  const started = h.logs.filter((line) => line.msg === 'agent process started').length;
  expect(started).toBeGreaterThanOrEqual(1);
  expect(await metric(h, 'tributary_agent_process_starts_total')).toBe(started);
});
