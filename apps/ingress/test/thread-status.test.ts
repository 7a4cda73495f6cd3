import { describe, expect, it } from 'vitest';
import { agentName } from '../src/thread-status.js';

describe('the agent /status names', () => {
  it.each([
    ['claude-agent-acp', 'claude-agent-acp'],
    ['/usr/local/bin/codex-acp -c model_provider=fake', 'codex-acp'],
    ['npx --yes @google/gemini-cli --experimental-acp', 'gemini-cli'],
    ['/usr/bin/node /srv/app/apps/agent/dist/main.js', 'agent'],
    ['node --import tsx ./src/index.ts', 'index'],
    ['', 'the configured agent'],
  ])('%j is %s', (command, name) => {
    expect(agentName(command)).toBe(name);
  });
});
