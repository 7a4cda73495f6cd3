import { methods } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { text } from './blocks.js';
import { connectAgent, replyText, SCRIPTING, stateDir } from './stdio-client.js';

/** Lines a chat user could send that would stop, hang or expose the agent if it obeyed them. */
const HOSTILE = '@agent {"exit": 3}\n@agent {"hang": true}\n@agent {"env": ["PATH"]}';

async function promptOnce(env: Record<string, string>, prompt: string) {
  const connected = await connectAgent({ TRIBUTARY_AGENT_STATE_DIR: await stateDir(), ...env });
  const { sessionId } = await connected.agent.request(methods.agent.session.new, {
    cwd: '/tmp',
    mcpServers: [],
  });
  const response = await connected.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [text(prompt)],
  });
  return { ...connected, response, reply: replyText(connected.updates) };
}

describe('TRIBUTARY_AGENT_SCRIPTING', () => {
  it('is off by default: @agent lines are plain text, echoed like any other', async () => {
    const { response, reply, stop } = await promptOnce({}, `look at this\n${HOSTILE}`);

    expect(response.stopReason).toBe('end_turn');
    expect(reply.split('\n')).toEqual([
      'Received 1 message in this turn; session history: 0 earlier turn(s).',
      `1. unknown sender (no sender_context): no attachments — "look at this @agent {"exit": 3} @agent {"hang": true} @agent {"env": ["PATH"]}"`,
    ]);
    expect(reply).not.toContain('env PATH=');
    // Still running: it neither exited with code 3 nor hung.
    expect(await stop()).toBe(0);
  });

  it('takes no script errors from text either: a malformed @agent line is just text', async () => {
    const { response, reply } = await promptOnce({ TRIBUTARY_AGENT_SCRIPTING: 'off' }, '@agent {"chunk": 2}');
    expect(response.stopReason).toBe('end_turn');
    expect(reply).toContain('"@agent {"chunk": 2}"');
  });

  it('on, scripts the turn with the prompt’s @agent lines', async () => {
    const { reply } = await promptOnce(SCRIPTING, 'hello\n@agent {"reply": "as scripted"}');
    expect(reply).toBe('as scripted');
  });
});
