import { methods } from '@agentclientprotocol/sdk';
import { expect, it } from 'vitest';
import { text } from './blocks.js';
import { connectAgent, replyText, SCRIPTING, stateDir } from './stdio-client.js';

it('applies TRIBUTARY_AGENT_DEFAULTS to every turn, under the prompt’s own @agent lines', async () => {
  const { agent, updates } = await connectAgent({
    ...SCRIPTING,
    TRIBUTARY_AGENT_STATE_DIR: await stateDir(),
    TRIBUTARY_AGENT_DEFAULTS: JSON.stringify({ reply: 'default reply', toolCalls: 1 }),
  });
  const { sessionId } = await agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
  const replies: string[] = [];
  for (const prompt of ['plain', 'scripted\n@agent {"reply": "own reply"}']) {
    const from = updates.length;
    await agent.request(methods.agent.session.prompt, { sessionId, prompt: [text(prompt)] });
    replies.push(replyText(updates.slice(from)));
  }

  expect(replies).toEqual(['default reply', 'own reply']);
  expect(updates.filter(({ update }) => update.sessionUpdate === 'tool_call')).toHaveLength(2);
});
