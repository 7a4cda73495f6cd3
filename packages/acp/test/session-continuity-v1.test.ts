import { describe, expect, it } from 'vitest';
import { afterRestart, text } from './support.js';

// ACP v2 has no agent without resume: these paths exist only under v1, so the v2 run leaves this file out.
describe('loadOrResume after a pool restart, with an agent that cannot resume (ACP v1)', () => {
  it('falls back to session/load and does not deliver the replay', async () => {
    const { pool, earlier, late } = await afterRestart({ resume: false });

    expect(await pool.loadOrResume('thread-1', earlier.sessionId)).toEqual({
      sessionId: earlier.sessionId,
      path: 'loaded',
    });
    const next = await pool.runTurn('thread-1', [text('again')]);
    expect(next.text).toContain('session history: 1 earlier turn(s)');
    expect(late).toEqual([]);
  });

  it('starts a new session when the agent can neither resume nor load', async () => {
    const { pool, earlier } = await afterRestart({ resume: false, loadSession: false });

    const opened = await pool.loadOrResume('thread-1', earlier.sessionId);
    expect(opened.path).toBe('new');
    expect(opened.sessionId).not.toBe(earlier.sessionId);
  });
});
