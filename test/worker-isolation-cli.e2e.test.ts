import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFrame, FRAME, FrameReader } from '@tributary/acp';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, startCli } from './support/cli-process.js';

describe('tributary worker and the isolation of its agents (real process)', () => {
  it('refuses to start where agents cannot be isolated, and says how to fix it', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'tributary-no-bwrap-'));
    onTestFinished(() => rm(empty, { recursive: true, force: true }));
    // No bwrap on PATH; Redis unreachable, since the check comes before anything else.
    const run = runCli(['worker'], {
      env: { PATH: empty, REDIS_URL: 'redis://127.0.0.1:1', METRICS_PORT: '0' },
    });
    const code = await run.exited();
    const output = run.output();
    expect(output).toContain('AGENT_SANDBOX: agents cannot be isolated here (bwrap is not installed)');
    expect(output).toContain('set AGENT_SANDBOX=off');
    expect(output).not.toContain('worker started');
    expect(code).not.toBe(0);
  });

  it.each([
    ['bubblewrap by default', {}, 'info', 'agents run isolated', /^bubblewrap \S+: own PID/],
    [
      'a warning when turned off',
      { AGENT_SANDBOX: 'off' },
      'warn',
      'agents are not isolated from the worker',
      /^off /,
    ],
  ])('logs which isolation is in force at start: %s', async (_, env, level, msg, isolation) => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const workspaces = await mkdtemp(join(tmpdir(), 'tributary-workspaces-'));
    onTestFinished(() => rm(workspaces, { recursive: true, force: true }));
    const worker = startCli('worker', {
      REDIS_URL: redis.url,
      REDIS_PREFIX: uniquePrefix('isolation'),
      METRICS_PORT: '0',
      AGENT_WORKSPACES: workspaces,
      ...env,
    });
    onTestFinished(async () => {
      await worker.stop();
    });
    const line = await worker.waitForLog('the isolation line', (log) => log.msg === msg, 40_000);
    expect(line).toMatchObject({ level: level === 'warn' ? 40 : 30 });
    expect(line.isolation).toMatch(isolation);
    await worker.waitForLog('worker start', (log) => log.msg === 'worker started', 40_000);
  });
});

describe('tributary worker and an agent host that gives no lease (real process)', () => {
  it('stops after its bound and names the agent host, not Redis', { timeout: 90_000 }, async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const dir = await mkdtemp(join(tmpdir(), 'tributary-silent-host-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    // An agent host that says what isolation it gives, and never answers a warden's lease.
    const socketPath = join(dir, 'agent-host.sock');
    const silent = createServer((socket) => {
      const reader = new FrameReader();
      socket.on('data', (chunk: Buffer) => {
        for (const frame of reader.push(chunk)) {
          if (frame.kind !== FRAME.hello) continue;
          const isolation = { kind: 'off', describe: 'nothing', workspace: null, roomsMove: false };
          socket.end(encodeFrame(FRAME.hello, isolation));
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(socketPath, resolve));
    onTestFinished(() => new Promise<void>((resolve) => silent.close(() => resolve())));

    const run = runCli(['worker'], {
      env: {
        PATH: process.env.PATH!,
        REDIS_URL: redis.url,
        REDIS_PREFIX: uniquePrefix('silent-host'),
        METRICS_PORT: '0',
        AGENT_WORKSPACES: dir,
        AGENT_SANDBOX: 'agent-host',
        AGENT_HOST_SOCKET: socketPath,
      },
    });
    const code = await run.exited();
    const output = run.output();
    expect(output).toContain(`the agent host at ${socketPath} gave this worker's warden no lease`);
    expect(output).not.toContain('check REDIS_URL');
    expect(output).not.toContain('worker started');
    expect(code).not.toBe(0);
  });
});
