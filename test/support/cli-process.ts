import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@tributary/testkit';

const bin = fileURLToPath(new URL('../../apps/cli/bin/tributary.js', import.meta.url));

/** A `tributary <command>` process, its JSON log lines parsed as they come. */
export interface CliProcess {
  readonly child: ChildProcess;
  readonly logs: Record<string, unknown>[];
  /** Waits for a log line matching `match` and returns it. */
  waitForLog(
    what: string,
    match: (log: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export function startCli(command: string, env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [bin, command], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logs: Record<string, unknown>[] = [];
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line));
  });
  return {
    child,
    logs,
    async waitForLog(what, match, timeoutMs = 20_000) {
      await waitFor(() => logs.some(match), { what, timeoutMs });
      return logs.find(match)!;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
}
