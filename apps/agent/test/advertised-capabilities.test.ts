import { spawnSync } from 'node:child_process';
import { methods } from '@agentclientprotocol/sdk';
import { expect, it } from 'vitest';
import { builtInAgentCommand } from '../src/index.js';
import { connectAgent, stateDir } from './stdio-client.js';

it('serves exactly the session methods it advertises', async () => {
  const { agent, initialized } = await connectAgent({
    TRIBUTARY_AGENT_STATE_DIR: await stateDir(),
    TRIBUTARY_AGENT_CAPS: JSON.stringify({ resume: false, close: false, image: false }),
  });
  expect(initialized.protocolVersion).toBe(1);
  expect(initialized.agentCapabilities).toEqual({
    loadSession: true,
    promptCapabilities: { image: false, audio: false, embeddedContext: true },
    sessionCapabilities: {},
  });

  const { sessionId } = await agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
  await expect(agent.request(methods.agent.session.resume, { sessionId, cwd: '/tmp' })).rejects.toMatchObject(
    {
      code: -32601,
    },
  );
});

it.each([
  ['TRIBUTARY_AGENT_CAPS', '{"imag": true}', 'unknown field \\"imag\\"'],
  ['TRIBUTARY_AGENT_SCRIPTING', 'yes', 'must be \\"on\\" or \\"off\\"'],
])('exits with code 2 on an invalid %s', (name, value, complaint) => {
  const { command, args } = builtInAgentCommand();
  const run = spawnSync(command, args, {
    env: { PATH: process.env.PATH ?? '', [name]: value },
    input: '',
    timeout: 10_000,
  });
  expect(run.status).toBe(2);
  expect(run.stderr.toString()).toContain(complaint);
});
