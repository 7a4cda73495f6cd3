import { readFile } from 'node:fs/promises';
import { methods } from '@agentclientprotocol/sdk';
import { expect, it } from 'vitest';
import { senderContext, text } from './blocks.js';
import { connectAgent, stateDir } from './stdio-client.js';

/** Bytes the process has passed to write(2) so far: its session files, its stdout and its stderr. */
async function bytesWritten(pid: number): Promise<number> {
  return Number(/^wchar: (\d+)$/m.exec(await readFile(`/proc/${pid}/io`, 'utf8'))![1]);
}

const TURNS = 200;
const WINDOW = 10;

// The same prompt every turn, so every turn's protocol traffic is the same size: what a turn writes
// can then only grow if the session file is rewritten with the whole history.
const prompt = [
  senderContext({ sender_id: 'u1', sender_name: 'alice', channel: 'bench', is_bot: false }),
  text(`is the build green yet? ${'the logs say something about a flaky test. '.repeat(8)}`),
];

it(`writes as many bytes for turn ${TURNS} as for turn ${WINDOW}: a turn's cost does not grow with the history`, async () => {
  const agent = await connectAgent({ TRIBUTARY_AGENT_STATE_DIR: await stateDir() });
  const { sessionId } = await agent.agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
  const perTurn: number[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const before = await bytesWritten(agent.pid);
    await agent.agent.request(methods.agent.session.prompt, { sessionId, prompt });
    perTurn.push((await bytesWritten(agent.pid)) - before);
  }
  const mean = (turns: number[]) => turns.reduce((a, b) => a + b, 0) / turns.length;
  const early = mean(perTurn.slice(WINDOW - 1, 2 * WINDOW - 1));
  const late = mean(perTurn.slice(TURNS - WINDOW));
  // The reply counts the earlier turns, so a few digits more; a rewrite would add a history's worth.
  expect(late).toBeGreaterThan(0);
  expect(late - early).toBeLessThan(16);
});
