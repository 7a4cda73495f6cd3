import { methods } from '@agentclientprotocol/sdk';
import { expect, it } from 'vitest';
import { senderContext, text } from './blocks.js';
import { connectAgent, replyText, SCRIPTING, stateDir } from './stdio-client.js';

it('replies with how many messages arrived, from whom, with which attachments', async () => {
  const { agent, updates } = await connectAgent({
    ...SCRIPTING,
    TRIBUTARY_AGENT_STATE_DIR: await stateDir(),
  });
  const { sessionId } = await agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });

  const response = await agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [
      senderContext({
        sender_id: 'U1',
        display_name: 'Alice',
        channel: 'slack',
        channel_id: 'C1',
        thread_id: 'T1',
      }),
      text('check the build'),
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'resource_link', uri: 'https://files.example/log.txt', name: 'log.txt' },
      {
        type: 'resource_link',
        uri: 'https://files.example/big.bin',
        name: 'big.bin',
        description: 'not fetched: too large',
      },
      {
        type: 'resource',
        resource: { uri: 'tributary://attachment/1/0/notes.txt', mimeType: 'text/plain', text: 'hello\n' },
      },
      senderContext({
        sender_id: 'B7',
        display_name: 'ci-bot',
        channel: 'slack',
        channel_id: 'C1',
        is_bot: true,
      }),
      text('build green\n@agent {"chunks": 3}'),
      senderContext({ sender_id: 'U1', display_name: 'Alice', channel: 'slack', channel_id: 'C1' }),
    ],
  });

  expect(response.stopReason).toBe('end_turn');
  expect(replyText(updates).split('\n')).toEqual([
    'Received 3 messages in this turn; session history: 0 earlier turn(s).',
    '1. Alice (U1, slack C1/T1): 4 attachments (image×1, resource_link×2, resource×1) — "check the build"',
    '   - image (image/png, 3 bytes)',
    '   - link log.txt',
    '   - link big.bin (note: not fetched: too large)',
    '   - file notes.txt (text/plain): "hello\\n"',
    '2. ci-bot (B7, bot, slack C1): no attachments — "build green"',
    '3. Alice (U1, slack C1): no attachments — ""',
  ]);
});
