import { methods } from '@agentclientprotocol/sdk';
import { type ArrivalEvent, buildHistoryBlock, packBatch } from '@tributary/packing';
import { expect, it } from 'vitest';
import { connectAgent, replyText, SCRIPTING, stateDir } from './stdio-client.js';

const event: ArrivalEvent = {
  eventId: 'e2',
  platform: 'slack',
  channelId: 'C1',
  threadId: 'T1',
  sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
  timestamp: '2026-01-02T03:04:05.000Z',
  text: 'and now?',
  attachments: [],
};
const caps = { embeddedContext: true };
const { block: history } = buildHistoryBlock(
  'slack:C1:T1',
  [
    {
      batchId: 'b1',
      endedAt: 0,
      events: [{ ...event, eventId: 'e1', text: 'hi' }],
      reply: 'hello',
      stopReason: 'end_turn',
    },
  ],
  { maxTokens: 1_000, caps },
)!;

async function prompt(script?: string) {
  const { agent, updates } = await connectAgent({
    ...SCRIPTING,
    TRIBUTARY_AGENT_STATE_DIR: await stateDir(),
  });
  const { sessionId } = await agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
  const packed = packBatch([{ ...event, text: script ? `${event.text}\n${script}` : event.text }], caps);
  await agent.request(methods.agent.session.prompt, { sessionId, prompt: [history, ...packed] });
  return { reply: replyText(updates), sent: [history, ...packed] };
}

it('tells the broker’s restored history apart from the users’ messages', async () => {
  const { reply } = await prompt();
  expect(reply.split('\n')).toEqual([
    'Received 1 message in this turn; session history: 0 earlier turn(s).',
    'Restored history from the broker: 1 block(s).',
    '1. Ada (U1, slack C1/T1): no attachments — "and now?"',
  ]);
});

it('reports the prompt exactly as received when asked to', async () => {
  const { reply, sent } = await prompt('@agent {"reportPrompt": true}');
  expect(JSON.parse(reply)).toEqual(sent);
});
