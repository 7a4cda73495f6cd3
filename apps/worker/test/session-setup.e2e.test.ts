import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { message, noteRoute, replies, startHarness, type WorkerHarness } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const mcpServers = [
  {
    name: 'files',
    command: '/usr/bin/mcp-files',
    args: ['--root', '/srv'],
    env: [{ name: 'A', value: 'b' }],
  },
  { type: 'sse', name: 'docs', url: 'https://mcp.example/sse', headers: [] },
];

describe('session setup from AGENT_MCP_SERVERS and AGENT_SESSION_MODE', () => {
  it('the agent gets the MCP servers, and the session is put in the configured mode', async () => {
    h = await startHarness(
      {
        AGENT_ENV: 'TRIBUTARY_AGENT_CAPS',
        AGENT_MCP_SERVERS: JSON.stringify(mcpServers),
        AGENT_SESSION_MODE: 'code',
      },
      {},
      { agentEnv: { TRIBUTARY_AGENT_CAPS: '{"modes": ["ask", "code"]}' } },
    );
    await h.send('th', message('which setup?\n@agent {"reportSession": true}'));
    await waitFor(() => replies(h!, 'th').length === 1, { what: 'the reply' });
    const reply = replies(h, 'th')[0]!.text;
    expect(reply).toContain('mode code');
    const sent = /^mcpServers (.*)$/m.exec(reply)?.[1];
    expect(JSON.parse(sent ?? 'null')).toEqual(mcpServers);
    expect(h.logs.some((l) => l.msg === 'session mode set' && l.modeId === 'code')).toBe(true);
  });

  it("sets up a routed thread's sessions as its route says, and others as the environment does", async () => {
    h = await startHarness(
      {
        AGENT_ENV: 'TRIBUTARY_AGENT_CAPS',
        AGENT_SESSION_MODE: 'code',
        AGENT_MCP_SERVERS: JSON.stringify(mcpServers),
      },
      {},
      { agentEnv: { TRIBUTARY_AGENT_CAPS: '{"modes": ["ask", "code"]}' } },
    );
    const routeServers = [{ name: 'tickets', command: '/usr/bin/mcp-tickets', args: [], env: [] }];
    await noteRoute(h, 'careful', 'careful', { sessionMode: 'ask', mcpServers: routeServers });
    for (const thread of ['careful', 'plain']) {
      await h.send(thread, message('which mode?\n@agent {"reportSession": true}'));
    }
    await waitFor(() => replies(h!, 'careful').length === 1 && replies(h!, 'plain').length === 1, {
      what: 'both replies',
    });
    const setup = (thread: string) => {
      const text = replies(h!, thread)[0]!.text;
      return {
        mode: /mode (\w+)/.exec(text)?.[1],
        servers: JSON.parse(/^mcpServers (.*)$/m.exec(text)![1]!),
      };
    };
    // The route's servers replace the environment's whole.
    expect(setup('careful')).toEqual({ mode: 'ask', servers: routeServers });
    expect(setup('plain')).toEqual({ mode: 'code', servers: mcpServers });
  });
});
