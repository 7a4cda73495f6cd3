import { tmpdir } from 'node:os';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AgentProcess, type TurnEvent } from '../src/index.js';
import { builtInAgent, scripted, startPool, tempDir } from './support.js';

/** The built-in agent speaking ACP `version`, whatever the suite runs under. */
const speaking = (version: '1' | '2') => ({ env: { TRIBUTARY_AGENT_ACP_VERSION: version } });

async function start(version: '1' | '2', onEvent?: (event: TurnEvent) => void): Promise<AgentProcess> {
  const agent = await AgentProcess.start({
    ...builtInAgent({ stateDir: await tempDir(), ...speaking(version) }),
    cwd: tmpdir(),
    ...(onEvent ? { onSessionUpdate: (_sessionId: string, event: TurnEvent) => onEvent(event) } : {}),
  });
  onTestFinished(async () => {
    await agent.kill();
  });
  return agent;
}

// An agent answering 3 is refused naming both versions: unsupported-protocol-version.test.ts.
describe('protocol version negotiation (offers 2)', () => {
  it('an agent that answers 1 is spoken to in v1, its raw v1 capabilities exposed', async () => {
    const agent = await start('1');
    expect(agent.protocolVersion).toBe(1);
    expect(agent.info.protocolVersion).toBe(1);
    expect(agent.info.capabilities).toMatchObject({ loadSession: true, sessionCapabilities: { resume: {} } });
  });

  it('an agent that answers 2 is spoken to in v2, its raw v2 capabilities exposed', async () => {
    const agent = await start('2');
    expect(agent.protocolVersion).toBe(2);
    expect(agent.info.protocolVersion).toBe(2);
    expect(agent.info.capabilities).toMatchObject({ session: { mcp: { stdio: {} } } });
    expect(agent.info.supports).toEqual({ loadSession: true, resume: true, close: true });
    const { sessionId } = await agent.openNewSession(tmpdir());
    expect(await agent.listSessions(tmpdir())).toContain(sessionId);
    await agent.closeSession(sessionId);
  });

  it('v2: the turn ends at the idle state_update, not at the answer to session/prompt', async () => {
    const { pool } = await startPool(speaking('2'));
    const events: TurnEvent[] = [];
    const started = Date.now();
    const result = await pool.runTurn(
      't1',
      scripted({ reply: 'after the delay', delayMs: 400, toolCalls: 1, plan: ['look'] }),
      { onUpdate: (event) => events.push(event) },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(result).toMatchObject({ stopReason: 'end_turn', text: 'after the delay' });
    // Tool-call upserts read as a tool_call and then its update; plan_update as a plan.
    expect(events.map((event) => event.kind)).toEqual(
      expect.arrayContaining(['agent_thought_chunk', 'plan', 'tool_call', 'tool_call_update']),
    );
  });

  it('v2: a cancelled turn ends cancelled; a failed one with the agent error', async () => {
    const { pool } = await startPool(speaking('2'));
    const { sessionId } = await pool.open('t1');
    const abort = new AbortController();
    const turn = pool.runTurn('t1', scripted({ delayMs: 5_000 }), { sessionId, signal: abort.signal });
    setTimeout(() => abort.abort(), 300);
    await expect(turn).resolves.toMatchObject({ stopReason: 'cancelled' });
    await expect(pool.runTurn('t1', scripted({ error: 'boom' }))).rejects.toThrow(/boom/);
  });

  it('v2: resume with replayFrom stands in for load and replays the conversation', async () => {
    const stateDir = await tempDir();
    const first = await AgentProcess.start({
      ...builtInAgent({ stateDir, ...speaking('2') }),
      cwd: tmpdir(),
    });
    onTestFinished(async () => {
      await first.kill();
    });
    const { sessionId } = await first.openNewSession(tmpdir());
    await first.prompt(sessionId, scripted({ reply: 'remember me' }));
    await first.kill();

    const replayed: TurnEvent[] = [];
    const second = await AgentProcess.start({
      ...builtInAgent({ stateDir, ...speaking('2') }),
      cwd: tmpdir(),
      onSessionUpdate: (_id, event) => replayed.push(event),
    });
    onTestFinished(async () => {
      await second.kill();
    });
    await second.loadSession(sessionId, tmpdir());
    expect(replayed).toContainEqual(
      expect.objectContaining({
        kind: 'other',
        update: expect.objectContaining({
          sessionUpdate: 'agent_message',
          content: [{ type: 'text', text: 'remember me' }],
        }),
      }),
    );
  });
});
