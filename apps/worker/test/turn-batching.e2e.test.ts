import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { message, replies, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('turn batching with the built-in agent', () => {
  it('starts turn 1 at once and packs what arrived during it into exactly one more prompt', async () => {
    h = await startHarness();
    const first = message('check the build\n@agent {"delayMs": 1500}');
    await h.send('th-1', first);
    await waitFor(() => h!.signals.some((s) => s.kind === 'started'), { what: 'turn 1 start' });

    const during = [
      message('actually wait', 'ada'),
      message('check the build and run e2e', 'bob'),
      message('thanks', 'ada'),
    ];
    for (const event of during) await h.send('th-1', event);
    await waitForReplies(h, 'th-1', 2);

    const sessions = await h.prompts();
    // One session for the thread: the second turn reused it (one session/new, not two).
    expect(sessions).toHaveLength(1);
    const [turn1, turn2] = sessions[0]!;
    expect(sessions[0]).toHaveLength(2);
    expect(turn1!.events.map((e) => e.prompt)).toEqual([first.text]);
    expect(turn2!.events.map((e) => [e.sender.sender_name, e.prompt, e.sender.timestamp])).toEqual(
      during.map((e) => [e.sender.name, e.text, e.timestamp]),
    );

    const [reply1, reply2] = replies(h, 'th-1');
    expect(reply1!.stopReason).toBe('end_turn');
    expect(reply2!.target.messageId).toBe(during[2]!.eventId);
    const dispatches = h.logs.filter((l) => l.msg === 'dispatch');
    expect(dispatches.map((d) => [d.events, d.sessionPath])).toEqual([
      [1, 'new'],
      [3, 'live'],
    ]);
  });
});
