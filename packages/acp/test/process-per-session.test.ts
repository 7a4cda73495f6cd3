import { expect, it } from 'vitest';
import { UnsupportedProtocolVersionError } from '../src/index.js';
import { processGone, recordingLogger, startPool, text } from './support.js';

it('gives every thread a process of its own and stops them all on close', async () => {
  const { pool } = await startPool({ warmSpares: 0 });
  await Promise.all(['a', 'b', 'c'].map((thread) => pool.runTurn(thread, [text('hi')])));
  const pids = ['a', 'b', 'c'].map((thread) => pool.pidOf(thread)!);

  expect(new Set(pids).size).toBe(3);
  expect(pool.liveProcesses).toBe(3);
  expect(pool.liveSessions).toBe(3);
  await pool.close();
  for (const pid of pids) expect(await processGone(pid)).toBe(true);
});

it('answers agentInfo from the first initialize without starting a process per call', async () => {
  const { pool } = await startPool({ warmSpares: 0 });
  const cold = await pool.agentInfo();
  expect(pool.liveProcesses).toBe(1);

  // The process started for that answer carries the next session.
  await pool.open('a');
  expect(pool.liveProcesses).toBe(1);
  expect(await pool.agentInfo()).toEqual(cold);
  await pool.open('b');
  expect(await pool.agentInfo()).toEqual(cold);
  expect(pool.liveProcesses).toBe(2);
});

it('stops the process of an evicted session without counting it as a restart', async () => {
  let restarts = 0;
  const { pool } = await startPool({ maxSessions: 1, warmSpares: 0, onAgentRestart: () => restarts++ });
  await pool.open('a');
  const evicted = pool.pidOf('a')!;

  await pool.open('b');

  // Reaped before the process of b started: the cap counts processes, not sessions.
  expect(await processGone(evicted)).toBe(true);
  expect(pool.liveProcesses).toBe(1);
  expect(pool.has('a')).toBe(false);
  expect(restarts).toBe(0);
});

it('tries again after an agent that failed to start for agentInfo', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ caps: { refuseInitialize: true }, logger });

  await expect(pool.agentInfo()).rejects.toBeInstanceOf(UnsupportedProtocolVersionError);
  await expect(pool.agentInfo()).rejects.toBeInstanceOf(UnsupportedProtocolVersionError);
  expect(records.filter((record) => record.message === 'agent process started')).toHaveLength(2);
  expect(pool.liveProcesses).toBe(0);
});
