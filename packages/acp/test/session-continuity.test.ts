import type { AgentFeatures } from '@tributary/agent';
import { describe, expect, it } from 'vitest';
import { AgentExitedError, type LateUpdate } from '../src/index.js';
import { recordingLogger, startPool, tempDir, text } from './support.js';

/** Runs one turn in a first pool (its own agent process), closes it, and opens a second pool. */
async function afterRestart(caps?: Partial<AgentFeatures>) {
  const stateDir = await tempDir();
  const first = await startPool({ stateDir, caps });
  const earlier = await first.pool.runTurn('thread-1', [text('remember me')]);
  await first.pool.close();
  const late: LateUpdate[] = [];
  const { pool } = await startPool({ stateDir, caps, onLateUpdate: (update) => late.push(update) });
  return { pool, earlier, late };
}

describe('loadOrResume after a pool restart', () => {
  it('prefers session/resume and keeps the history', async () => {
    const { pool, earlier } = await afterRestart();

    expect(await pool.loadOrResume('thread-1', earlier.sessionId)).toEqual({
      sessionId: earlier.sessionId,
      path: 'resumed',
    });
    const next = await pool.runTurn('thread-1', [text('again')]);
    expect(next.sessionId).toBe(earlier.sessionId);
    expect(next.text).toContain('session history: 1 earlier turn(s)');
  });

  // ACP v2 has no agent without resume: these two paths exist only under v1.
  const v1Only = it.skipIf(process.env.TRIBUTARY_AGENT_ACP_VERSION === '2');

  v1Only('falls back to session/load and does not deliver the replay', async () => {
    const { pool, earlier, late } = await afterRestart({ resume: false });

    expect(await pool.loadOrResume('thread-1', earlier.sessionId)).toEqual({
      sessionId: earlier.sessionId,
      path: 'loaded',
    });
    const next = await pool.runTurn('thread-1', [text('again')]);
    expect(next.text).toContain('session history: 1 earlier turn(s)');
    expect(late).toEqual([]);
  });

  v1Only('starts a new session when the agent can neither resume nor load', async () => {
    const { pool, earlier } = await afterRestart({ resume: false, loadSession: false });

    const opened = await pool.loadOrResume('thread-1', earlier.sessionId);
    expect(opened.path).toBe('new');
    expect(opened.sessionId).not.toBe(earlier.sessionId);
  });

  it('starts a new session when the agent does not know the stored one', async () => {
    const { pool } = await startPool();

    const opened = await pool.loadOrResume('thread-1', 'no-such-session');
    expect(opened.path).toBe('new');
    expect(await pool.loadOrResume('thread-1', opened.sessionId)).toEqual({ ...opened, path: 'live' });
  });

  it('fails with AgentExitedError, trying no further step, when the agent dies during one', async () => {
    const { logger, records } = recordingLogger();
    const { pool } = await startPool({ caps: { exitOnResume: true }, logger });

    await expect(pool.loadOrResume('thread-1', 'stored-session')).rejects.toBeInstanceOf(AgentExitedError);
    expect(records.map((record) => record.message)).not.toContain('session continuity step refused');
    expect(pool.has('thread-1')).toBe(false);
  });
});
