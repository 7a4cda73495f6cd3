import { tmpdir } from 'node:os';
import type { AgentFeatures } from '@tributary/agent';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AgentProcess } from '../src/index.js';
import { builtInAgent, tempDir } from './support.js';

async function start(caps?: Partial<AgentFeatures>): Promise<AgentProcess> {
  const agent = await AgentProcess.start({
    ...builtInAgent({ stateDir: await tempDir(), caps }),
    cwd: tmpdir(),
  });
  onTestFinished(async () => {
    await agent.kill();
  });
  return agent;
}

describe('initialize', () => {
  it('negotiates the protocol version and exposes the agent capabilities', async () => {
    const agent = await start();
    expect(agent.info.protocolVersion).toBe(Number(process.env.TRIBUTARY_AGENT_ACP_VERSION ?? 1));
    expect(agent.info.agentInfo?.name).toBe('tributary-agent');
    expect(agent.info.promptCapabilities).toEqual({ image: true, audio: false, embeddedContext: true });
    expect(agent.info.supports).toEqual({ loadSession: true, resume: true, close: true });
    expect(agent.alive).toBe(true);
  });

  it('reports a text-only agent as such', async () => {
    const agent = await start({
      image: false,
      embeddedContext: false,
      loadSession: false,
      resume: false,
      close: false,
    });
    expect(agent.info.promptCapabilities).toEqual({ image: false, audio: false, embeddedContext: false });
    expect(agent.info.supports).toEqual({ loadSession: false, resume: false, close: false });
  });
});
