import type { Readable } from 'node:stream';

/**
 * Calls `handle` with each whole line a child process writes (its JSON log lines): the benchmarks
 * learn from the worker's own log when it has started and what each dispatch carried.
 */
export function onLogLines(stream: Readable, handle: (line: string) => void): void {
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) handle(line);
  });
}
