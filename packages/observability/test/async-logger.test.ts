import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs `code` (an ES module) in a child process and returns what it wrote to stdout. */
async function stdoutOf(code: string): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((resolve) => child.on('close', resolve));
  return out;
}

describe('the default logger', () => {
  it('writes asynchronously yet loses no line when the process exits at once', async () => {
    const out = await stdoutOf(`
      import { createLogger } from '@tributary/observability';
      const logger = createLogger('info');
      for (let i = 0; i < 20000; i++) logger.info({ i, token: 'hush' }, 'line');
      process.exit(3);
    `);
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { i: number; token: string });
    expect(lines).toHaveLength(20000);
    expect(lines.at(-1)).toMatchObject({ i: 19999, token: '[redacted]' });
  });
});
