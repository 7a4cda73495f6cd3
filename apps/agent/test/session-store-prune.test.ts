import { mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore } from '../src/session-store.js';

const HOUR = 60 * 60 * 1000;
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('session store', () => {
  it('prunes session files untouched for longer than the retention, and keeps the others', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-'));
    const store = new SessionStore(dir, HOUR);
    const stale = await store.create('/a');
    const fresh = await store.create('/b');
    const past = new Date(Date.now() - 2 * HOUR);
    await utimes(join(dir, 'sessions', `${stale.sessionId}.jsonl`), past, past);

    expect(await store.prune()).toBe(1);
    expect(await readdir(join(dir, 'sessions'))).toEqual([`${fresh.sessionId}.jsonl`]);
    expect(await store.read(stale.sessionId)).toBeUndefined();
    expect(await store.read(fresh.sessionId)).toMatchObject({ cwd: '/b' });
  });

  it('prunes on session creation, so an agent that only creates sessions stays bounded', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-'));
    const first = new SessionStore(dir, HOUR);
    const old = await first.create('/a');
    const past = new Date(Date.now() - 2 * HOUR);
    await utimes(join(dir, 'sessions', `${old.sessionId}.jsonl`), past, past);
    // A new agent process over the same folder: its first session/new looks.
    const next = await new SessionStore(dir, HOUR).create('/b');
    expect(await readdir(join(dir, 'sessions'))).toEqual([`${next.sessionId}.jsonl`]);
  });
});
