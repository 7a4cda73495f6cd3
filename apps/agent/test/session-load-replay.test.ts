import { methods, RequestError } from '@agentclientprotocol/sdk';
import { expect, it } from 'vitest';
import { text } from './blocks.js';
import { connectAgent, SCRIPTING, stateDir } from './stdio-client.js';

it('persists history and replays it on session/load after a restart, before answering', async () => {
  const env = { ...SCRIPTING, TRIBUTARY_AGENT_STATE_DIR: await stateDir() };
  const first = await connectAgent(env);
  const { sessionId } = await first.agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
  await first.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [text('remember this\n@agent {"reply": "noted"}')],
  });
  expect(await first.stop()).toBe(0);

  const second = await connectAgent(env);
  await second.agent.request(methods.agent.session.load, { sessionId, cwd: '/tmp', mcpServers: [] });

  expect(second.updates.map(({ sessionId: id, update }) => ({ id, update }))).toEqual([
    {
      id: sessionId,
      update: {
        sessionUpdate: 'user_message_chunk',
        content: text('remember this\n@agent {"reply": "noted"}'),
      },
    },
    { id: sessionId, update: { sessionUpdate: 'agent_message_chunk', content: text('noted') } },
  ]);
});

it('answers session/load and session/resume of an unknown session with resource-not-found', async () => {
  const { agent } = await connectAgent({ TRIBUTARY_AGENT_STATE_DIR: await stateDir() });
  const load = agent.request(methods.agent.session.load, { sessionId: 'nope', cwd: '/tmp', mcpServers: [] });
  const resume = agent.request(methods.agent.session.resume, { sessionId: '../../etc/passwd', cwd: '/tmp' });

  await expect(load).rejects.toMatchObject({ code: -32002 });
  await expect(resume).rejects.toBeInstanceOf(RequestError);
});
