import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect, it } from 'vitest';
import { MAX_LINE_LENGTH, StderrTail } from '../src/stderr-tail.js';

// A progress bar redrawn with `\r` is one line that never ends: 4 MiB of it, from a real process, read
// through a pipe in the chunks the pipe gives, as the agent's stderr is.
const BAR_STATES = 60_000;

async function tailOfChild(after: string): Promise<{ tail: StderrTail; lines: string[] }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `for (let i = 1; i <= ${BAR_STATES}; i++) {
        process.stderr.write('\\rdownloading [' + '#'.repeat(i % 40).padEnd(40) + '] ' + i + '/${BAR_STATES}');
      }
      process.stderr.write(${JSON.stringify(after)});`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const tail = new StderrTail((line) => line);
  const lines: string[] = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => lines.push(...tail.push(chunk)));
  await once(child, 'close');
  return { tail, lines };
}

it('keeps an endless progress bar to the end of its line, and the lines after it', async () => {
  const { tail, lines } = await tailOfChild('\nerror: no api key\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]!.length).toBeLessThanOrEqual(MAX_LINE_LENGTH);
  expect(lines[0]).toMatch(new RegExp(`^….*\\] ${BAR_STATES}/${BAR_STATES}$`, 's'));
  expect(lines[1]).toBe('error: no api key');
  expect(tail.toString()).toBe(lines.join('\n'));
});

it('keeps the end of a line the agent never finished', async () => {
  const { tail, lines } = await tailOfChild(' failed');
  expect(lines).toEqual([]);
  expect(tail.toString().length).toBeLessThanOrEqual(MAX_LINE_LENGTH);
  expect(tail.toString()).toMatch(new RegExp(`\\] ${BAR_STATES}/${BAR_STATES} failed$`));
});

it('holds no more than its lines, each cut to its end, however much arrives without a newline', () => {
  const tail = new StderrTail((line) => line.replaceAll('hunter2-secret', '[redacted]'), 3);
  const chunk = '\r[=====>    ] 50% '.repeat(4_000);
  for (let i = 0; i < 256; i++) {
    expect(tail.push(chunk)).toEqual([]);
    expect(tail.toString().length).toBeLessThanOrEqual(MAX_LINE_LENGTH);
  }
  const out = tail.push('done hunter2-secret\nnext line\nlast');
  expect(out).toHaveLength(2);
  expect(out[0]!.length).toBeLessThanOrEqual(MAX_LINE_LENGTH);
  expect(out[0]!.endsWith('50% done [redacted]')).toBe(true);
  expect(out[1]).toBe('next line');
  expect(tail.toString().split('\n').slice(-2)).toEqual(['next line', 'last']);
});

it('keeps no piece of a word it cut, so a credential cut in half is not left for the scrubber to miss', () => {
  const tail = new StderrTail((line) => line);
  const cut = tail.push(`${'k'.repeat(MAX_LINE_LENGTH * 2)} rest\n`);
  expect(cut).toEqual(['…rest']);
});
