import { tmpdir } from 'node:os';
import { expect, it } from 'vitest';
import { type AgentCommandConfig, AgentProcess, UnsupportedProtocolVersionError } from '../src/index.js';
import { builtInAgent, processGone, recordingLogger, tempDir } from './support.js';

/** Starts the agent, expecting the refusal; returns the error and whether the process is gone. */
async function refused(agent: AgentCommandConfig): Promise<{ error: unknown; gone: boolean }> {
  const { logger, records } = recordingLogger();
  const error = await AgentProcess.start({ ...agent, cwd: tmpdir(), logger }).catch(
    (caught: unknown) => caught,
  );
  const pid = records.find((record) => record.message === 'agent process started')?.fields.pid;
  expect(pid).toBeTypeOf('number');
  return { error, gone: await processGone(pid as number) };
}

it('refuses an agent that answers a version other than 1 or 2, naming both, and kills it', async () => {
  const { error, gone } = await refused(
    builtInAgent({ stateDir: await tempDir(), caps: { protocolVersion: 3 } }),
  );
  expect(error).toBeInstanceOf(UnsupportedProtocolVersionError);
  expect(error).toMatchObject({ supported: [1, 2], answered: 3 });
  expect((error as Error).message).toContain('speaks only versions 1 and 2');
  expect(gone).toBe(true);
});

it('refuses an agent that answers initialize with error -32022 and kills it', async () => {
  const { error, gone } = await refused(
    builtInAgent({ stateDir: await tempDir(), caps: { refuseInitialize: true } }),
  );
  expect(error).toBeInstanceOf(UnsupportedProtocolVersionError);
  expect(error).toMatchObject({ supported: [1, 2], answered: undefined });
  expect(gone).toBe(true);
});
