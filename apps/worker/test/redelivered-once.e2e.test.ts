import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './fleet/fleet.js';
import { agentPrompts, message } from './worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const THREAD = 'gateway:C1:T1';

describe('a batch re-delivered after a crash', { timeout: 90_000 }, () => {
  it('reaches the model once: the re-run opens a fresh session seeded from committed history', async () => {
    const f = await startFleet({});
    fleet = f;
    // One agent state for both workers, as on a shared volume: the crashed worker's session could be
    // resumed, and it holds the interrupted prompt.
    const shared = await f.tempDir();
    const [a, b] = await Promise.all([
      f.spawn({ agentStateDir: shared }),
      f.spawn({ agentStateDir: shared }),
    ]);
    await f.send(THREAD, message('first question'));
    await f.waitForReplies(THREAD, 1);
    const owner = f.dispatches(THREAD)[0]!.worker;

    const interrupted = message('long job\n@agent {"delayMs": 20000}');
    await f.send(THREAD, interrupted);
    await waitFor(() => f.dispatches(THREAD).length === 2, { what: 'the long turn to start' });
    expect(f.dispatches(THREAD)[1]!.worker).toBe(owner);
    await owner.kill();

    await f.waitForReplies(THREAD, 2);
    const rerun = f.dispatches(THREAD)[2]!;
    expect(rerun.worker).toBe(owner === a ? b : a);

    // In the session the model answered from, the interrupted message is there once.
    const sessions = await agentPrompts(shared);
    const answering = sessions.find((prompts) => prompts[0]?.sessionId === rerun.log.sessionId)!;
    const seen = answering.flatMap((prompt) => prompt.events).filter((e) => e.prompt === interrupted.text);
    expect(seen).toHaveLength(1);
    expect(rerun.log).toMatchObject({ sessionPath: 'new', deliveries: 2, historyTurns: 1 });
  });
});
