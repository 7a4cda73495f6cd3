import { tmpdir } from 'node:os';
import { expect, it } from 'vitest';
import { AgentProcess, UnsupportedProtocolVersionError } from '../src/index.js';
import { builtInAgent, processGone, recordingLogger, tempDir } from './support.js';

it('refuses an agent that answers another protocol version and kills it', async () => {
  const { logger, records } = recordingLogger();
  const starting = AgentProcess.start({
    ...builtInAgent({ stateDir: await tempDir(), caps: { protocolVersion: 2 } }),
    cwd: tmpdir(),
    logger,
  });
  const error = await starting.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(UnsupportedProtocolVersionError);
  expect(error).toMatchObject({ requested: 1, answered: 2 });
  const started = records.find((record) => record.message === 'agent process started');
  expect(await processGone(started?.fields.pid as number)).toBe(true);
});
