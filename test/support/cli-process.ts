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

/** A `tributary …` process whose stdout and stderr are collected as text, for commands that print for people. */
export interface CliRun {
  readonly child: ChildProcess;
  /** stdout and stderr interleaved as they arrived. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  exited(): Promise<number | null>;
}

export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; ownProcessGroup?: boolean } = {},
): CliRun {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // As a terminal runs a foreground job: a group of its own, which Ctrl-C signals as a whole.
    detached: options.ownProcessGroup ?? false,
  });
  let all = '';
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    all += chunk;
    out += chunk;
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    all += chunk;
    err += chunk;
  });
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => all, stdout: () => out, stderr: () => err, exited: () => exit };
}

/**
 * Waits for `run` to print `text`. A whole stack starting as one of many test processes on two cores
 * can take several times its idle time, hence the generous default; a timeout names what it printed.
 */
export async function waitForOutput(run: CliRun, text: string | RegExp, timeoutMs = 30_000): Promise<void> {
  const printed = () => (typeof text === 'string' ? run.output().includes(text) : text.test(run.output()));
  await waitFor(printed, {
    what: () => `${text} in its output; it printed: ${run.output().slice(-4000)}`,
    timeoutMs,
  });
}
