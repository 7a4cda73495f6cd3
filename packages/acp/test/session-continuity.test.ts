import { describe, expect, it } from 'vitest';
import { AgentExitedError } from '../src/index.js';
import { afterRestart, recordingLogger, startPool, text } from './support.js';

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
