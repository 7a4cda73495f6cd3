import { describe, expect, it } from 'vitest';
import type { McpServer } from '../src/index.js';
import { builtInAgent, recordingLogger, scripted, startPool, storedSessions, tempDir } from './support.js';

const mcpServers: McpServer[] = [
  {
    name: 'files',
    command: '/usr/bin/mcp-files',
    args: ['--root', '/srv'],
    env: [{ name: 'A', value: 'b' }],
  },
  { type: 'http', name: 'docs', url: 'https://mcp.example/docs', headers: [] },
];

describe('session setup from configuration', () => {
  it('hands the MCP servers to session/new, then to session/resume and session/load', async () => {
    const stateDir = await tempDir();
    for (const caps of [{}, { resume: false }]) {
      const { pool } = await startPool({ agent: { ...builtInAgent({ stateDir, caps }), mcpServers } });
      const first = await pool.open('thread-1');
      expect(first.path).toBe('new');
      let [record] = (await storedSessions(stateDir)).filter((s) => s.sessionId === first.sessionId);
      expect(record?.mcpServers).toEqual(mcpServers);
      await pool.close();

      const { pool: next } = await startPool({
        agent: { ...builtInAgent({ stateDir, caps }), mcpServers: [] },
      });
      const again = await next.loadOrResume('thread-1', first.sessionId);
      expect(again.path).toBe(caps.resume === false ? 'loaded' : 'resumed');
      [record] = (await storedSessions(stateDir)).filter((s) => s.sessionId === first.sessionId);
      expect(record?.mcpServers).toEqual([]);
    }
  });

  it('puts each session in the configured mode when the agent offers it', async () => {
    const stateDir = await tempDir();
    const caps = { modes: ['ask', 'code'] };
    const { logger, records } = recordingLogger();
    const { pool } = await startPool({ stateDir, caps, sessionMode: 'code', logger });

    const turn = await pool.runTurn('thread-1', scripted({ reportSession: true }));
    expect(turn.text).toContain('mode code');
    expect(records.filter((r) => r.message === 'session mode set')).toHaveLength(1);
    await pool.close();

    // Resumed in a new process, the session is already in that mode: nothing more to send.
    const second = recordingLogger();
    const { pool: next } = await startPool({ stateDir, caps, sessionMode: 'code', logger: second.logger });
    await next.loadOrResume('thread-1', turn.sessionId);
    expect(second.records.filter((r) => r.message === 'session mode set')).toEqual([]);
    expect((await next.runTurn('thread-1', scripted({ reportSession: true }))).text).toContain('mode code');
  });

  it('warns once per session, naming the offered modes, when the configured one is not among them', async () => {
    const { logger, records } = recordingLogger();
    const { pool } = await startPool({ caps: { modes: ['ask', 'code'] }, sessionMode: 'architect', logger });

    const turn = await pool.runTurn('thread-1', scripted({ reportSession: true }));
    await pool.runTurn('thread-1', scripted({}));
    expect(turn.text).toContain('mode ask');
    const warnings = records.filter((r) => r.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain('(it offers ask, code)');
    expect(warnings[0]?.fields).toMatchObject({ kind: 'not-offered', modeId: 'architect', current: 'ask' });
  });

  it('only notes at debug level an agent that offers no modes', async () => {
    const { logger, records } = recordingLogger();
    const { pool } = await startPool({ sessionMode: 'code', logger });

    const turn = await pool.runTurn('thread-1', scripted({ reportSession: true }));
    expect(turn.text).toContain('mode (none)');
    expect(records.filter((r) => r.level === 'warn')).toEqual([]);
    expect(records.some((r) => r.level === 'debug' && r.fields.kind === 'no-modes')).toBe(true);
  });
});
