import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `tributary doctor` as a real process, with no Redis and only the variables given. */
async function doctor(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const stateDir = await mkdtemp(join(tmpdir(), 'tributary-doctor-'));
  onTestFinished(() => rm(stateDir, { recursive: true, force: true }));
  const child = spawn(process.execPath, [bin, 'doctor', ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      AGENT_WORKSPACES: stateDir,
      // Unreachable: the check must not need Redis.
      REDIS_URL: 'redis://127.0.0.1:1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

const REQUIRE_AUTH = { AGENT_ENV: 'TRIBUTARY_AGENT_CAPS', TRIBUTARY_AGENT_CAPS: '{"requireAuth": true}' };

describe('tributary doctor (real process, built-in agent)', () => {
  it('prints the protocol version negotiated with an ACP v2 agent, and a prompt runs under it', async () => {
    const run = await doctor(
      { AGENT_ENV: 'TRIBUTARY_AGENT_ACP_VERSION', TRIBUTARY_AGENT_ACP_VERSION: '2' },
      '--prompt',
      'still there?',
    );
    expect(run.stdout).toContain('protocol version 2 (negotiated; speaks 1 and 2), agent tributary-agent');
    expect(run.stdout).toMatch(/✓ prompt: stop reason end_turn, \d+ chars/);
    expect(run.stdout).toContain('still there?');
    expect(run.code).toBe(0);
  });

  it('a working agent: every step passes, capabilities are listed, exit 0', async () => {
    const run = await doctor({}, '--prompt', 'are you there?');
    expect(run.stdout).toMatch(/✓ isolation: bubblewrap \S+: own PID, mount, IPC and user namespaces/);
    expect(run.stdout).toContain('✓ started (pid');
    expect(run.stdout).toContain('protocol version 1 (negotiated; speaks 1 and 2), agent tributary-agent');
    expect(run.stdout).toContain('sessions: load yes, resume yes, close yes');
    expect(run.stdout).toContain('auth methods: none');
    expect(run.stdout).toMatch(/✓ session\/new in .*: session /);
    expect(run.stdout).toMatch(/✓ prompt: stop reason end_turn, \d+ chars/);
    expect(run.stdout).toContain('are you there?');
    expect(run.stdout).toContain('Result: a worker can use this agent.');
    expect(run.code).toBe(0);
  });

  it('isolation off: the agent still runs, with a warning that says what it can read and how to isolate it', async () => {
    const run = await doctor({ AGENT_SANDBOX: 'off' });
    expect(run.stdout).toContain('! isolation: off (AGENT_SANDBOX=off): agents run as the worker');
    expect(run.stdout).toContain('fix: install bubblewrap and unset AGENT_SANDBOX');
    expect(run.stdout).toContain('Result: a worker can use this agent.');
    expect(run.code).toBe(0);
  });

  it('an agent host: checks the agent it starts under the check’s own lease, exit 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tributary-doctor-host-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const socket = join(dir, 'agent-host.sock');
    const host = spawn(process.execPath, [bin, 'agent-host'], {
      env: { PATH: process.env.PATH, AGENT_HOST_SOCKET: socket },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    onTestFinished(() => {
      host.kill('SIGTERM');
    });
    let hostLog = '';
    await new Promise<void>((resolve) =>
      host.stdout.on('data', (chunk) => {
        hostLog += chunk;
        if (hostLog.includes('agent host listening')) resolve();
      }),
    );
    const run = await doctor(
      { AGENT_SANDBOX: 'agent-host', AGENT_HOST_SOCKET: socket },
      '--prompt',
      'via the host',
    );
    expect(run.stdout).toMatch(/✓ isolation: agent host at .*; inside it bubblewrap /);
    expect(run.stdout).toMatch(/✓ prompt: stop reason end_turn, \d+ chars/);
    expect(run.stdout).toContain('via the host');
    expect(run.code).toBe(0);
    expect(hostLog).toContain('agent started');
  });

  it('no bubblewrap: fails as a worker would refuse to start, naming both ways out, exit 1', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'tributary-no-bwrap-'));
    onTestFinished(() => rm(empty, { recursive: true, force: true }));
    const run = await doctor({ PATH: empty });
    expect(run.stdout).toContain(
      '✗ isolation: AGENT_SANDBOX: agents cannot be isolated here (bwrap is not installed)',
    );
    expect(run.stdout).toContain('apt-get install bubblewrap');
    expect(run.stdout).toContain('AGENT_SANDBOX=off');
    expect(run.stdout).not.toContain('✓ started');
    expect(run.code).toBe(1);
  });

  it('an agent that requires authentication, no method configured: says which to set, exit 1', async () => {
    const run = await doctor(REQUIRE_AUTH);
    expect(run.stdout).toContain('auth method "tributary-test-login": Test login');
    expect(run.stdout).toContain('– authenticate: not called (AGENT_AUTH_METHOD unset)');
    expect(run.stdout).toContain('✗ session/new: agent requires authentication');
    expect(run.stdout).toContain('fix: set AGENT_AUTH_METHOD=tributary-test-login');
    expect(run.stdout).toContain('Result: a worker cannot use this agent');
    expect(run.code).toBe(1);
  });

  it('the same agent with AGENT_AUTH_METHOD set: signs in and opens a session, exit 0', async () => {
    const run = await doctor({ ...REQUIRE_AUTH, AGENT_AUTH_METHOD: 'tributary-test-login' });
    expect(run.stdout).toContain('✓ authenticate: signed in with "tributary-test-login"');
    expect(run.stdout).toMatch(/✓ session\/new in /);
    expect(run.code).toBe(0);
  });

  it('a method the agent does not offer: names the offered ones, exit 1', async () => {
    const run = await doctor({ ...REQUIRE_AUTH, AGENT_AUTH_METHOD: 'api-key' });
    expect(run.stdout).toContain('✗ authenticate: auth method "api-key" is not offered');
    expect(run.stdout).toContain('fix: set AGENT_AUTH_METHOD to "tributary-test-login"');
    expect(run.code).toBe(1);
  });

  it('a command that does not exist: says it was not found, exit 1', async () => {
    const run = await doctor({ AGENT_COMMAND: '/nonexistent/agent --acp' });
    expect(run.stdout).toContain('✗ start: command "/nonexistent/agent" was not found');
    expect(run.stdout).toContain('fix: install the agent, or set AGENT_COMMAND to its full path');
    expect(run.code).toBe(1);
  });

  it('an agent that does not answer initialize in time: names slowness and AGENT_INIT_TIMEOUT_MS, exit 1', async () => {
    const run = await doctor({ AGENT_COMMAND: 'sleep 60', AGENT_INIT_TIMEOUT_MS: '1000' });
    expect(run.stdout).toContain(
      '✗ start: agent "sleep" did not start: no answer to initialize within 1000 ms',
    );
    expect(run.stdout).toContain('the agent may just be slow to start');
    expect(run.stdout).toContain('raise AGENT_INIT_TIMEOUT_MS (now 1000)');
    expect(run.code).toBe(1);
  });

  it('usage errors exit 2; --help prints the doctor usage', async () => {
    const bad = await doctor({}, '--frobnicate');
    expect(bad.stderr).toContain('usage: tributary doctor');
    expect(bad.code).toBe(2);
    const help = await doctor({}, '--help');
    expect(help.stdout).toContain('usage: tributary doctor [--prompt "text"]');
    expect(help.code).toBe(0);
  });
});
