// Every way out of `tributary dev` stops its private redis-server and removes .tributary/dev.json:
// Ctrl-C through a pipe whose reader died first (`npm run dev | tee log`, with npm passing the
// signal on again), SIGTERM, and SIGHUP (the terminal closed). A folder whose redis-server still runs
// is refused, naming the pid and how to stop it. Warnings read as lines, not JSON.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, runCli, waitForOutput } from './support/cli-process.js';

let scratch: string;
const leftovers: number[] = [];
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'tributary-dev-exits-'));
});
afterAll(async () => {
  for (const pid of leftovers) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await rm(scratch, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A dev stack on a private redis-server, in its own process group as a terminal runs it; resolves once
 * its banner shows. Each test stops its stack, so all use one project folder.
 */
async function startDev(env: Record<string, string> = {}): Promise<{ dev: CliRun; redisPid: number }> {
  const unused = `redis://127.0.0.1:${await freePort()}`;
  const dev = runCli(['dev'], {
    cwd: scratch,
    env: { PORT: '0', REDIS_URL: unused, ...env },
    ownProcessGroup: true,
  });
  await waitForOutput(dev, 'Ctrl-C stops everything');
  const pidFile = join(scratch, '.tributary/redis/redis.pid');
  const redisPid = Number(readFileSync(pidFile, 'utf8'));
  leftovers.push(redisPid);
  expect(alive(redisPid)).toBe(true);
  return { dev, redisPid };
}

async function expectStopped(dev: CliRun, redisPid: number): Promise<void> {
  expect(await dev.exited(), dev.output().slice(-2000)).toBe(0);
  await waitFor(() => !alive(redisPid), { what: `redis-server ${redisPid} to stop`, timeoutMs: 10_000 });
  expect(existsSync(join(scratch, '.tributary/dev.json'))).toBe(false);
}

describe('tributary dev stops its private Redis on every way out', () => {
  it('Ctrl-C through a pipe whose reader is gone, the signal arriving twice as npm passes it on', async () => {
    const { dev, redisPid } = await startDev();
    // `| tee log` ended by the same Ctrl-C: the next write to stdout fails with EPIPE.
    dev.child.stdout!.destroy();
    process.kill(-dev.child.pid!, 'SIGINT');
    dev.child.kill('SIGINT');
    await expectStopped(dev, redisPid);
  }, 60_000);

  it.each(['SIGTERM', 'SIGHUP'] as const)(
    '%s',
    async (signal) => {
      const { dev, redisPid } = await startDev();
      dev.child.kill(signal);
      await expectStopped(dev, redisPid);
      expect(dev.output()).toContain('stopping (threads are handed back)');
    },
    60_000,
  );
});

describe('a folder whose redis-server still runs', () => {
  it('is refused, naming the pid and how to stop it, and no second server starts', async () => {
    const { dev, redisPid } = await startDev();
    // The way a stack loses its Redis: the process killed outright, its server (own group) left running.
    dev.child.kill('SIGKILL');
    await dev.exited();
    expect(alive(redisPid)).toBe(true);

    const second = runCli(['dev'], {
      cwd: scratch,
      env: { PORT: '0', REDIS_URL: `redis://127.0.0.1:${await freePort()}` },
    });
    expect(await second.exited()).toBe(1);
    expect(second.stderr()).toContain(`a redis-server (pid ${redisPid}) still runs on`);
    expect(second.stderr()).toContain(`kill ${redisPid}`);
    expect(second.output()).not.toContain('private Redis at');

    process.kill(redisPid, 'SIGTERM');
    await waitFor(() => !alive(redisPid), { what: 'the left-over server to stop' });
  }, 60_000);
});

describe('what tributary dev prints', () => {
  it('writes log lines for people, not JSON', async () => {
    const { dev, redisPid } = await startDev({ LOG_LEVEL: 'info' });
    dev.child.kill('SIGTERM');
    await expectStopped(dev, redisPid);
    const lines = dev.output().split('\n');
    expect(lines.filter((line) => line.trim().startsWith('{'))).toEqual([]);
    // The worker's hand-off, among others, as a line: level, component, message, fields.
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {2}info worker: worker stopped; threads handed back/),
    );
  }, 60_000);
});
