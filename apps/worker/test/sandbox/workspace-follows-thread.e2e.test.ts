// Two workers that share nothing on disk but the workspace root: each its own HOME and temp folder,
// agents in sandboxes whose HOME is the thread's agent home. A thread whose worker is killed finds its
// files, and its agent's own session, on the worker that takes it over.
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, type FleetWorker, startFleet } from '../fleet/fleet.js';
import { message } from '../worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const THREAD = 'gateway:C1:T1';

describe('a thread’s workspace and agent session on another worker (bubblewrap)', {
  timeout: 120_000,
}, () => {
  it.each([
    ['session/resume', {}, 'resumed'],
    ['session/load', { resume: false }, 'loaded'],
  ])(
    'after a SIGKILL between turns the next turn reads the file and the session continues via %s',
    async (_, caps, path) => {
      const f = await startFleet({ TRIBUTARY_AGENT_CAPS: JSON.stringify(caps) });
      fleet = f;
      const workspaces = await f.tempDir();
      const spawn = async () =>
        f.spawn({
          env: {
            HOME: await f.tempDir(),
            TMPDIR: await f.tempDir(),
            AGENT_SANDBOX: 'bubblewrap',
            AGENT_WORKSPACES: workspaces,
            AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING,TRIBUTARY_AGENT_CAPS',
          },
        });
      const workers: FleetWorker[] = [await spawn(), await spawn()];

      await f.send(THREAD, message('@agent {"shell": "echo the plan is ready > plan.txt"}'));
      await f.waitForReplies(THREAD, 1);
      const [turn1] = f.dispatches(THREAD);
      await waitFor(
        async () => (await f.queue.admin.state(THREAD)).status === 'idle' && (await f.outboxEmpty(THREAD)),
        {
          what: 'turn 1 committed and its reply delivered',
        },
      );
      await turn1!.worker.kill();

      await f.send(THREAD, message('@agent {"shell": "cat plan.txt"}'));
      await f.waitForReplies(THREAD, 2);
      const [, turn2] = f.dispatches(THREAD);
      expect(turn2!.worker).toBe(workers.find((w) => w !== turn1!.worker));
      expect(turn2!.log).toMatchObject({
        sessionPath: path,
        sessionId: turn1!.log.sessionId,
        historyTurns: 0,
      });
      const reply = f.replies(THREAD).at(-1)!.message.text;
      expect(reply).toContain('the plan is ready');
      // The agent's own record of turn 1 came along: no history was pasted in as text.
      expect(reply).toContain('session history: 1 earlier turn(s)');
    },
  );
});
