import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStoredSessions } from '../src/index.js';
import { SessionStore } from '../src/session-store.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const file = (sessionId: string) => join(dir!, 'sessions', `${sessionId}.jsonl`);

describe('session file', () => {
  it('is a header, then one line per history entry or setting change, appended', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-'));
    const store = new SessionStore(dir);
    const record = await store.create('/work');
    await store.update(record, { mcpServers: [], modeId: 'ask' });
    await store.appendEntry(record, { role: 'user', prompt: [{ type: 'text', text: 'hi' }] });
    await store.appendEntry(record, { role: 'agent', text: 'hello' });
    await store.update(record, { mcpServers: [], modeId: 'ask' });
    await store.update(record, { closedAt: '2030-01-01T00:00:00.000Z' });

    const lines = (await readFile(file(record.sessionId), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((line) => line.kind)).toEqual(['session', 'settings', 'history', 'history', 'settings']);
    const [read] = await readStoredSessions(dir);
    expect(read).toEqual({
      sessionId: record.sessionId,
      cwd: '/work',
      createdAt: record.createdAt,
      mcpServers: [],
      modeId: 'ask',
      closedAt: '2030-01-01T00:00:00.000Z',
      history: [
        { role: 'user', prompt: [{ type: 'text', text: 'hi' }] },
        { role: 'agent', text: 'hello' },
      ],
    });
    expect(await store.read(record.sessionId)).toEqual(read);
  });

  it('loses only the line a crash cut short, and the next append starts a line of its own', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-'));
    const first = new SessionStore(dir);
    const record = await first.create('/work');
    await first.appendEntry(record, { role: 'user', prompt: [{ type: 'text', text: 'one' }] });
    // The agent died half-way through writing its reply.
    await appendFile(file(record.sessionId), '{"kind":"history","role":"agent","te');

    const second = new SessionStore(dir);
    const loaded = await second.read(record.sessionId);
    expect(loaded?.history).toEqual([{ role: 'user', prompt: [{ type: 'text', text: 'one' }] }]);
    await second.appendEntry(loaded!, { role: 'user', prompt: [{ type: 'text', text: 'two' }] });

    const [read] = await readStoredSessions(dir);
    expect(read?.history.map((entry) => (entry.role === 'user' ? entry.prompt : entry.text))).toEqual([
      [{ type: 'text', text: 'one' }],
      [{ type: 'text', text: 'two' }],
    ]);
  });

  it('is written again whole when it was deleted while its session stayed open', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-sessions-'));
    const store = new SessionStore(dir);
    const record = await store.create('/work');
    await store.appendEntry(record, { role: 'user', prompt: [{ type: 'text', text: 'one' }] });
    await rm(file(record.sessionId));
    await store.appendEntry(record, { role: 'agent', text: 'two' });
    expect(await store.read(record.sessionId)).toMatchObject({ cwd: '/work', history: record.history });
    expect(record.history).toHaveLength(2);
  });
});
