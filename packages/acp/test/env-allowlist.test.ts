import { expect, it, onTestFinished } from 'vitest';
import { buildAgentEnv } from '../src/index.js';
import { scripted, startPool } from './support.js';

it('starts the agent from an empty environment plus the allowlist and explicit variables', async () => {
  process.env.TRIBUTARY_TEST_SECRET = 'hunter2';
  onTestFinished(() => {
    delete process.env.TRIBUTARY_TEST_SECRET;
  });
  const { pool } = await startPool({ env: { EXPLICIT_VAR: 'given' } });

  const { text } = await pool.runTurn(
    'thread-1',
    scripted({ reply: 'env report', env: ['TRIBUTARY_TEST_SECRET', 'EXPLICIT_VAR', 'PATH'] }),
  );

  expect(text).toContain('env TRIBUTARY_TEST_SECRET is unset');
  expect(text).toContain('env EXPLICIT_VAR=given');
  expect(text).toContain(`env PATH=${process.env.PATH}`);
});

it('lets explicit variables win and inherits only the named ones', () => {
  const parent = { PATH: '/bin', HOME: '/root', AWS_SECRET_ACCESS_KEY: 'x', API_KEY: 'k' };
  expect(buildAgentEnv({ inheritEnv: ['PATH', 'API_KEY'], env: { PATH: '/opt/bin' } }, parent)).toEqual({
    PATH: '/opt/bin',
    API_KEY: 'k',
  });
  expect(buildAgentEnv({}, parent)).toEqual({ PATH: '/bin', HOME: '/root' });
});
