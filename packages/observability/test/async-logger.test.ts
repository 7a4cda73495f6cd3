import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

/** Runs `code` (an ES module) in a child process; resolves with what it wrote to stdout and its exit code. */
async function run(code: string): Promise<{ out: string; code: number | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const [exitCode] = (await once(child, 'close')) as [number | null];
  return { out, code: exitCode };
}

describe('the default logger', () => {
  const parse = (out: string) =>
    out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { i: number; token: string });

  it('writes asynchronously, and exitWhenWritten exits only once every line is out', async () => {
    const { out, code } = await run(`
      import { createLogger, exitWhenWritten } from '@tributary/observability';
      const logger = createLogger('info');
      for (let i = 0; i < 20000; i++) logger.info({ i, token: 'hush' }, 'line');
      exitWhenWritten(logger, 3);
    `);
    expect(code).toBe(3);
    const lines = parse(out);
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 20000 }, (_, i) => i));
    expect(lines.at(-1)).toMatchObject({ i: 19999, token: '[redacted]' });
  });

  it('an exit at once still writes every buffered line: only the one write in flight may be cut', async () => {
    const { out, code } = await run(`
      import { createLogger } from '@tributary/observability';
      const logger = createLogger('info');
      for (let i = 0; i < 20000; i++) logger.info({ i }, 'line');
      process.exit(3);
    `);
    expect(code).toBe(3);
    // The first line left on its own write; the other 19,999 waited in the buffer pino flushes at exit.
    const buffered = parse(out).filter((line) => line.i > 0);
    expect(buffered.map((line) => line.i)).toEqual(Array.from({ length: 19999 }, (_, i) => i + 1));
  });
});
