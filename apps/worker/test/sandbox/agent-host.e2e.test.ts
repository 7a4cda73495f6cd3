// The agents in a process of their own, as in a container of their own beside the worker: a real
// `tributary agent-host` and real workers talking to it over its socket. A worker killed mid-turn
// leaves no agent and no tool behind in the host.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '../fleet/fleet.js';
import { message } from '../worker-fixture.js';

const bin = fileURLToPath(new URL('../../../cli/bin/tributary.js', import.meta.url));

let fleet: Fleet | undefined;
let host: ChildProcess | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
  if (host?.exitCode === null) {
    const exited = new Promise((resolve) => host!.once('exit', resolve));
    host.kill('SIGTERM');
    await exited;
  }
  host = undefined;
});

const THREAD = 'gateway:C1:T1';

/** `tributary agent-host` on `socketPath`, its log lines as they come. */
async function startAgentHost(socketPath: string, logs: Record<string, unknown>[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, 'agent-host'], {
    env: { PATH: process.env.PATH, AGENT_HOST_SOCKET: socketPath },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line));
  });
  await waitFor(() => logs.some((l) => l.msg === 'agent host listening'), {
    what: 'the agent host to listen',
    timeoutMs: 40_000,
  });
  return child;
}

/** The processes of the test's tool, by their unmistakable command lines (sleep 371, sleep 372). */
function marked(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (argv[0] === 'sleep' && /^37[12]$/.test(argv[1] ?? '') && state !== 'Z') found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

describe('agents run by an agent host beside the worker', { timeout: 120_000 }, () => {
  it('runs the turns, and kills the agent and its tool when the worker is killed mid-turn', async () => {
    const f = await startFleet({});
    fleet = f;
    const socketPath = join(await f.tempDir(), 'agent-host.sock');
    const hostLogs: Record<string, unknown>[] = [];
    host = await startAgentHost(socketPath, hostLogs);
    expect(hostLogs.find((l) => l.msg === 'agent host listening')?.isolation).toMatch(/^bubblewrap /);
    const env = {
      AGENT_SANDBOX: 'agent-host',
      AGENT_HOST_SOCKET: socketPath,
      AGENT_WORKSPACES: await f.tempDir(),
      AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
    };
    const worker = await f.spawn({ env });
    expect(worker.logs.find((l) => l.msg === 'agents run isolated')?.isolation).toMatch(
      /^agent host at .*; inside it bubblewrap /,
    );

    await f.send(
      THREAD,
      message('@agent {"shell": "echo written by the agent > notes.txt && cat notes.txt && pwd"}'),
    );
    await f.waitForReplies(THREAD, 1);
    expect(f.replies(THREAD)[0]!.message.text).toContain('written by the agent\n/workspace');

    // A turn whose tool leaves a process in a session of its own and then runs on: the worker dies under it.
    await f.send(THREAD, message('@agent {"shell": "setsid sleep 371 & sleep 372"}'));
    await waitFor(() => marked().length === 2, { what: 'the tool and its detached process running' });
    await worker.kill();
    await waitFor(() => hostLogs.some((l) => l.msg === 'agents killed'), {
      what: 'the host to kill the dead worker’s agents',
      timeoutMs: 10_000,
    });
    await waitFor(() => marked().length === 0, {
      what: 'the tool and its detached process gone',
      timeoutMs: 5000,
    });
    expect(hostLogs.filter((l) => l.msg === 'agent started').length).toBeGreaterThanOrEqual(2);
  });
});
