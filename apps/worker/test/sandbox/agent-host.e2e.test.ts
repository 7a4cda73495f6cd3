// The agents in a process of their own, as in a container of their own beside the worker: a real
// `tributary agent-host` and real workers talking to it over its socket. A worker killed mid-turn
// leaves no agent and no tool behind in the host; an agent that finds the host's socket starts nothing
// there; a host killed mid-turn is told to the thread, the log and the metrics, and its return resumes
// the waiting batch.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
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
async function startAgentHost(
  socketPath: string,
  logs: Record<string, unknown>[],
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, 'agent-host'], {
    env: { PATH: process.env.PATH, AGENT_HOST_SOCKET: socketPath, ...env },
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

/** The processes of the test's tools, by their unmistakable command lines (sleep 371 to 373). */
function marked(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (argv[0] === 'sleep' && /^37[123]$/.test(argv[1] ?? '') && state !== 'Z') found.push(Number(entry));
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
    await waitFor(() => marked().length === 0, {
      what: 'the tool and its detached process gone',
      timeoutMs: 10_000,
    });
    // Whichever came first ended it, and said so: the agent's own connection closing, or the warden
    // revoking the dead worker's lease (which then finds no agent left to kill). The line may reach
    // this process after the processes are gone.
    const killedLine = /^(agents killed|agent connection closed while the agent ran; killing it)$/;
    await waitFor(() => hostLogs.some((l) => (l.level as number) >= 40 && killedLine.test(String(l.msg))), {
      what: 'the host to say it killed the agent',
      timeoutMs: 10_000,
    });
    expect(hostLogs.filter((l) => l.msg === 'agent started').length).toBeGreaterThanOrEqual(2);
  });

  it('keeps its socket out of the sight of the agents it sandboxes', async () => {
    const f = await startFleet({});
    fleet = f;
    const socketPath = join(await f.tempDir(), 'agent-host.sock');
    host = await startAgentHost(socketPath, []);
    await f.spawn({ env: await hostedWorkerEnv(f, socketPath) });
    await f.send(THREAD, shell(`test -e ${socketPath} && echo socket-visible || echo socket-invisible`));
    await f.waitForReplies(THREAD, 1);
    expect(f.replies(THREAD)[0]!.message.text).toContain('socket-invisible');
  });

  it('starts nothing for an agent that finds its socket, even with no sandbox of its own', async () => {
    const f = await startFleet({});
    fleet = f;
    const dir = await f.tempDir();
    const socketPath = join(dir, 'agent-host.sock');
    const hostLogs: Record<string, unknown>[] = [];
    // As on restricted Kubernetes: no user namespaces, so the agents share the host's view.
    host = await startAgentHost(socketPath, hostLogs, { AGENT_SANDBOX: 'off' });
    const env = await hostedWorkerEnv(f, socketPath);
    await f.spawn({ env });
    const forge = join(dir, 'forge.mjs');
    const marker = join(dir, 'forged-agent-ran');
    await writeFile(forge, FORGED_SPAWN);
    await f.send(THREAD, shell(`echo "home=$HOME"; ${process.execPath} ${forge} ${socketPath} ${marker}`));
    await f.waitForReplies(THREAD, 1);
    const reply = f.replies(THREAD)[0]!.message.text;
    expect(reply).toMatch(/host answered: .*carries no live lease’s ticket/);
    // Its session store is on the workspace volume, not in the container's HOME: it follows its thread.
    expect(reply).toContain(`home=${env.AGENT_WORKSPACES}\n`);
    expect(existsSync(marker)).toBe(false);
    expect(hostLogs.some((l) => l.msg === 'agent host refused a spawn without a lease ticket')).toBe(true);
  });

  it('tells the thread, the log and the metrics when the host dies mid-turn, and resumes when it is back', async () => {
    const f = await startFleet({});
    fleet = f;
    const socketPath = join(await f.tempDir(), 'agent-host.sock');
    const hostLogs: Record<string, unknown>[] = [];
    host = await startAgentHost(socketPath, hostLogs);
    const worker = await f.spawn({
      env: { ...(await hostedWorkerEnv(f, socketPath)), AGENT_SLOW_START_NOTICE_MS: '2000' },
    });
    // Its first run leaves a mark in the workspace and hangs; a re-run finds the mark and answers.
    await f.send(THREAD, shell('if [ -e ran ]; then echo second run; else touch ran; sleep 373; fi'));
    await waitFor(() => marked().length === 1, { what: 'the tool running' });
    const exited = new Promise((resolve) => host!.once('exit', resolve));
    host!.kill('SIGKILL');
    await exited;
    // Its sandboxes die with it: nothing of the turn runs on.
    await waitFor(() => marked().length === 0, { what: 'the tool gone with its host', timeoutMs: 5000 });

    const notices = () =>
      worker.logs.filter(
        (l) => l.msg === 'sent' && (l.message as { kind: string; text: string }).kind === 'notice',
      );
    await waitFor(() => notices().length > 0, { what: 'a notice in the thread', timeoutMs: 20_000 });
    expect((notices()[0]!.message as { text: string }).text).toMatch(/taking longer than usual to start/);
    const warned = worker.logs.filter((l) => (l.level as number) >= 40).map((l) => l.msg);
    expect(warned).toContain('agent did not start');
    expect(warned).toContain('agent host lease connection failed; no agent starts until it is taken again');
    const healthUrl = worker.logs.find((l) => l.msg === 'worker started')!.healthUrl as string;
    const metrics = await (await fetch(`${healthUrl}/metrics`)).text();
    expect(Number(/^tributary_agent_start_failures_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    expect(f.replies(THREAD)).toHaveLength(0);

    host = await startAgentHost(socketPath, []);
    await f.waitForReplies(THREAD, 1);
    expect(f.replies(THREAD)[0]!.message.text).toContain('second run');
  });
});

/** A worker whose agents the agent host at `socketPath` runs, each thread in a room of a fresh root. */
async function hostedWorkerEnv(f: Fleet, socketPath: string): Promise<Record<string, string>> {
  return {
    AGENT_SANDBOX: 'agent-host',
    AGENT_HOST_SOCKET: socketPath,
    AGENT_WORKSPACES: await f.tempDir(),
    AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
  };
}

/** A turn of the scripted built-in agent that runs `command` and answers with its output. */
const shell = (command: string) => message(`@agent ${JSON.stringify({ shell: command })}`);

/**
 * What an agent that found the host's socket would send: an agent start of its own, without the
 * ticket only a worker's warden learns. Prints the host's answer; run with the socket and the file the
 * forged agent would create.
 */
const FORGED_SPAWN = `import { connect } from 'node:net';
const [socketPath, marker] = process.argv.slice(2);
const payload = Buffer.from(JSON.stringify({
  command: '/bin/sh', args: ['-c', 'touch ' + marker], env: {}, room: { workspace: '/tmp', home: '/tmp' },
}));
const header = Buffer.alloc(5);
header[0] = 1;
header.writeUInt32BE(payload.length, 1);
const socket = connect(socketPath, () => socket.write(Buffer.concat([header, payload])));
let answer = Buffer.alloc(0);
socket.on('data', (chunk) => { answer = Buffer.concat([answer, chunk]); });
socket.on('close', () => console.log('host answered: ' + answer.subarray(5).toString()));
socket.on('error', (error) => console.log('socket error: ' + error.message));
`;
