import { tmpdir } from 'node:os';
import { expect, it } from 'vitest';
import { AgentExitedError, AgentProcess, AgentStartError } from '../src/index.js';

it('fails with AgentStartError when the command does not exist', async () => {
  const error = await AgentProcess.start({ command: '/nonexistent/agent', cwd: tmpdir() }).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentStartError);
});

it('fails with AgentStartError carrying the exit when the agent dies before initialize', async () => {
  const error = await AgentProcess.start({
    command: process.execPath,
    args: ['-e', 'process.stderr.write("no api key\\n"); process.exit(4)'],
    cwd: tmpdir(),
  }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AgentStartError);
  const cause = (error as AgentStartError).cause;
  expect(cause).toBeInstanceOf(AgentExitedError);
  expect(cause).toMatchObject({ code: 4, signal: null, stderrTail: 'no api key' });
});
