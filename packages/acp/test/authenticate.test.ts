import { tmpdir } from 'node:os';
import type { AgentFeatures } from '@tributary/agent';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AgentAuthError, AgentProcess } from '../src/index.js';
import { builtInAgent, tempDir } from './support.js';

const TEST_LOGIN = {
  id: 'tributary-test-login',
  name: 'Test login',
  description: 'Accepts any client.',
  type: 'agent',
};

async function start(caps: Partial<AgentFeatures>, authMethod?: string): Promise<AgentProcess> {
  const agent = await AgentProcess.start({
    ...builtInAgent({ stateDir: await tempDir(), caps }),
    ...(authMethod === undefined ? {} : { authMethod }),
    cwd: tmpdir(),
  });
  onTestFinished(async () => {
    await agent.kill();
  });
  return agent;
}

describe('authentication', () => {
  it('signs in with the configured method after initialize, so sessions open', async () => {
    const agent = await start({ requireAuth: true }, 'tributary-test-login');
    expect(agent.info.authMethods).toEqual([TEST_LOGIN]);
    await expect(agent.openNewSession(tmpdir())).resolves.toMatchObject({ sessionId: expect.any(String) });
  });

  it('without a configured method: session/new fails with AgentAuthError naming the offered methods', async () => {
    const agent = await start({ requireAuth: true });
    const error = await agent.openNewSession(tmpdir()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentAuthError);
    expect(error).toMatchObject({
      method: 'session/new',
      configured: undefined,
      offered: [TEST_LOGIN],
      agentMessage: expect.stringContaining('sign in with the "tributary-test-login" method first'),
    });
    expect((error as Error).message).toMatch(
      /^agent requires authentication for session\/new: .*; it offers "tributary-test-login"$/,
    );
    // The process is still usable: nothing but the session was refused.
    expect(agent.alive).toBe(true);
  });

  it('a method the agent does not offer fails the start, and the process is stopped', async () => {
    const error = await start({ requireAuth: true }, 'api-key').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentAuthError);
    expect(error).toMatchObject({ method: 'authenticate', configured: 'api-key', offered: [TEST_LOGIN] });
    expect((error as Error).message).toBe(
      'auth method "api-key" is not offered; it offers "tributary-test-login"',
    );
  });

  it('an agent that offers no method needs none: a configured method is not sent', async () => {
    const agent = await start({}, 'tributary-test-login');
    expect(agent.info.authMethods).toEqual([]);
    await expect(agent.openNewSession(tmpdir())).resolves.toMatchObject({ sessionId: expect.any(String) });
  });
});
