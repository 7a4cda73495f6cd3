import { describe, expect, it } from 'vitest';
import type { SessionPool, TurnEvent } from '../src/index.js';
import { grandchildPid, processGone, scripted, startPool, waitFor } from './support.js';

/**
 * Runs a turn on `thread` whose agent starts a tool in a session of its own that ignores SIGTERM (as a
 * shell busy with its own work may), and resolves with the tool's pid once it runs. The agent itself
 * ends on SIGTERM, so a stop that only kills its group after it exits leaves the tool behind.
 */
async function toolOf(
  pool: SessionPool,
  thread: string,
  script: object = {},
): Promise<{ tool: number; turn: Promise<unknown> }> {
  const events: TurnEvent[] = [];
  const turn = pool
    .runTurn(thread, scripted({ spawnDetached: true, ...script }), { onUpdate: (e) => events.push(e) })
    .catch((error: unknown) => error);
  const tool = await waitFor(() => grandchildPid(events, 'detached child'), 'the detached tool to run');
  return { tool, turn };
}

const gone = (pid: number) => waitFor(() => processGone(pid), `tool ${pid} to end`, 5_000);

describe('every way an agent is stopped ends the tools it started, setsid or not', () => {
  it('closing the pool (shutdown)', async () => {
    const { pool } = await startPool({ warmSpares: 0 });
    const { tool } = await toolOf(pool, 'a', { delayMs: 60_000 });
    await pool.close();
    expect(await gone(tool)).toBe(true);
  });

  it('evicting an idle session for another thread', async () => {
    const { pool } = await startPool({ maxSessions: 1, warmSpares: 0 });
    const { tool, turn } = await toolOf(pool, 'a');
    // The turn ends; its tool runs on, as a background job of a coding agent may.
    await turn;
    await pool.open('b');
    expect(pool.has('a')).toBe(false);
    expect(await gone(tool)).toBe(true);
  });

  it('releasing a thread that moved to another worker', async () => {
    const { pool } = await startPool({ warmSpares: 0 });
    const { tool, turn } = await toolOf(pool, 'a');
    await turn;
    await pool.release('a');
    expect(await gone(tool)).toBe(true);
  });

  it('a cancel the agent does not honour in time', async () => {
    const { pool } = await startPool({ warmSpares: 0, cancelTimeoutMs: 200, killGraceMs: 300 });
    const controller = new AbortController();
    const events: TurnEvent[] = [];
    const turn = pool
      .runTurn('a', scripted({ spawnDetached: true, hang: true }), {
        signal: controller.signal,
        onUpdate: (e) => events.push(e),
      })
      .catch((error: unknown) => error);
    const tool = await waitFor(() => grandchildPid(events, 'detached child'), 'the detached tool to run');
    controller.abort();
    await turn;
    expect(await gone(tool)).toBe(true);
  });

  it('killing the agent of a thread that leaves the worker', async () => {
    const { pool } = await startPool({ warmSpares: 0 });
    const { tool } = await toolOf(pool, 'a', { delayMs: 60_000 });
    await pool.kill('a');
    expect(await gone(tool)).toBe(true);
  });
});
