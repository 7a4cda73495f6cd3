// The CLI as a newcomer meets it, each case a real `tributary` process: help and version, refused
// flags, `send` with no stack or a stopped one, `send` from a subfolder, a second project on the same
// Redis, the dev banner's agent, Ctrl-C on the dev stack with its private Redis, running or starting,
// and a start that fails half-way.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, type RedisHandle, redisAnswers, startRedis } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, runCli, waitForOutput } from './support/cli-process.js';

const version = (await import('../apps/cli/package.json', { with: { type: 'json' } })).default.version;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'tributary-first-run-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A fresh project folder. */
async function project(name: string): Promise<string> {
  const dir = join(scratch, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function startDev(cwd: string, env: Record<string, string>, ownProcessGroup = false): Promise<CliRun> {
  const dev = runCli(['dev'], { cwd, env: { PORT: '0', ...env }, ownProcessGroup });
  await waitForOutput(dev, 'In another terminal');
  return dev;
}

/** Ctrl-C, as a terminal sends it; resolves with how the process ended, and what it printed last. */
async function stopDev(dev: CliRun): Promise<string> {
  dev.child.kill('SIGINT');
  const code = await dev.exited();
  return code === 0
    ? 'exit 0'
    : `exit ${code} (signal ${dev.child.signalCode}); it printed last: ${dev.output().slice(-2000)}`;
}

describe.concurrent('help and version', () => {
  it.each(['dev', 'send', 'ingress', 'worker', 'discord-forwarder', 'doctor'])(
    '`tributary %s --help` prints that command’s usage and exits 0',
    async (command) => {
      const run = runCli([command, '--help']);
      expect(await run.exited()).toBe(0);
      expect(run.stdout()).toMatch(new RegExp(`^usage: tributary ${command}\\b`));
      expect(run.stdout()).not.toContain('commands:');
    },
  );

  it.each(['--version', '-v'])('`tributary %s` prints the version and exits 0', async (flag) => {
    const run = runCli([flag]);
    expect(await run.exited()).toBe(0);
    expect(run.stdout()).toBe(`tributary ${version}\n`);
  });
});

describe.concurrent('arguments a command does not take', () => {
  it.each([
    [['ingress', '--port', '9999'], "unexpected argument '--port'"],
    [['worker', '--concurrency', '4'], "unexpected argument '--concurrency'"],
    [['dev', '--agent', 'x'], "unexpected argument '--agent'"],
    [['discord-forwarder', 'now'], "unexpected argument 'now'"],
    [['send', '--bogus', 'hi'], "Unknown option '--bogus'"],
    [['send', '--timeout-ms', 'abc', 'hi'], "--timeout-ms must be a positive integer, got 'abc'"],
    [['send'], 'nothing to send'],
    [['--nope'], "unknown option '--nope'"],
  ])('`tributary %j` exits 2 saying why, with the usage', async (args, why) => {
    // A Redis URL nothing listens on: had a long-running command started, it would not have exited 2.
    const run = runCli(args, { env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
    expect(await run.exited()).toBe(2);
    expect(run.stderr()).toContain(why);
    expect(run.stderr()).toContain('usage: tributary');
  });
});

describe('tributary send without a running stack', () => {
  it('with no stack in this folder or above, says how to start one', async () => {
    const run = runCli(['send', 'hello'], { cwd: await project('never-started') });
    expect(await run.exited()).toBe(1);
    expect(run.stderr()).toContain('no local stack found here or in any folder above');
    expect(run.stderr()).toContain('npm run dev');
  });

  it('with a stack that was stopped or crashed, says so instead of "fetch failed"', async () => {
    const dir = await project('crashed');
    const port = await freePort();
    await mkdir(join(dir, '.tributary'));
    await writeFile(
      join(dir, '.tributary', 'dev.json'),
      JSON.stringify({
        ingressUrl: `http://127.0.0.1:${port}`,
        gatewaySecret: 'left-behind-secret',
        repliesUrl: `http://127.0.0.1:${port}`,
      }),
    );
    const run = runCli(['send', 'hello'], { cwd: dir });
    expect(await run.exited()).toBe(1);
    expect(run.stderr()).toContain(`the dev stack started in ${dir} does not answer`);
    expect(run.stderr()).toContain('npm run dev');
    expect(run.stderr()).not.toContain('fetch failed');
  });
});

describe('tributary dev on a shared Redis', () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await startRedis({ private: true });
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('is found by send from a subfolder, and a second project starts with no history of the first', async () => {
    const first = await project('first');
    const dev = await startDev(first, { REDIS_URL: redis.url });
    expect(dev.output()).toContain('built-in, @agent scripting on');
    const subfolder = join(first, 'src', 'deep');
    await mkdir(subfolder, { recursive: true });
    const hello = runCli(['send', 'hello from the first project'], { cwd: subfolder });
    expect(await hello.exited(), hello.output()).toBe(0);
    expect(hello.stdout()).toContain('session history: 0 earlier turn(s)');
    expect(await stopDev(dev)).toBe('exit 0');

    // Same machine, same Redis, same default thread: another checkout's first turn is its own.
    const second = await project('second');
    const other = await startDev(second, { REDIS_URL: redis.url });
    const greet = runCli(['send', 'hello from the second project'], { cwd: second });
    expect(await greet.exited(), greet.output()).toBe(0);
    expect(greet.stdout()).toContain('session history: 0 earlier turn(s)');
    expect(greet.stdout()).not.toContain('Restored history');
    expect(await stopDev(other)).toBe('exit 0');

    // The first project, restarted, continues its own session from its own agent state.
    const again = await startDev(first, { REDIS_URL: redis.url });
    const more = runCli(['send', 'still there?'], { cwd: first });
    expect(await more.exited(), more.output()).toBe(0);
    expect(more.stdout()).toContain('session history: 1 earlier turn(s)');
    expect(more.stdout()).not.toContain('Restored history');
    expect(await stopDev(again)).toBe('exit 0');
  }, 120_000);

  it('names the configured agent in its banner', async () => {
    const agentMain = fileURLToPath(new URL('../apps/agent/src/main.ts', import.meta.url));
    const command = `${process.execPath} --import tsx ${agentMain}`;
    const dev = await startDev(await project('configured'), { REDIS_URL: redis.url, AGENT_COMMAND: command });
    expect(dev.output()).toContain(`agent        ${command}   (AGENT_COMMAND)`);
    expect(dev.output()).not.toContain('built-in');
    expect(await stopDev(dev)).toBe('exit 0');
  });
});

describe('Ctrl-C on tributary dev with its private Redis', () => {
  it('hands the running thread back before Redis stops, then stops Redis', async () => {
    const dir = await project('private-redis');
    const unused = `redis://127.0.0.1:${await freePort()}`;
    // Its own process group, as a terminal runs it: Ctrl-C signals every process of the group.
    const dev = await startDev(dir, { REDIS_URL: unused, LOG_LEVEL: 'info' }, true);
    const privateUrl = dev.output().match(/redis {8}(redis:\/\/\S+)/)?.[1];
    expect(privateUrl, dev.output()).toBeDefined();
    const send = runCli(['send', 'a long one\n@agent {"delayMs": 60000}'], { cwd: dir });
    // The first turn of a thread waits for `send` to start and for the agent's session to open.
    await waitForOutput(dev, /\bdispatch \(/);

    process.kill(-dev.child.pid!, 'SIGINT');
    expect(await dev.exited()).toBe(0);
    const afterSignal = dev.output().slice(dev.output().indexOf('stopping'));
    expect(afterSignal).toContain('worker stopped; threads handed back');
    expect(afterSignal).not.toMatch(/ECONNREFUSED|Connection is closed|\bat .+:\d+:\d+/);
    expect(await redisAnswers(privateUrl!)).toBe(false);
    expect(await send.exited()).toBe(1);
  }, 90_000);

  it('pressed while the stack starts, stops it in order once it is up', async () => {
    const dir = await project('interrupted-start');
    const unused = `redis://127.0.0.1:${await freePort()}`;
    const dev = runCli(['dev'], { cwd: dir, env: { PORT: '0', REDIS_URL: unused }, ownProcessGroup: true });
    // Signalled the moment its first line arrives, as a quick finger would: long before it is up.
    dev.child.stdout!.once('data', () => process.kill(-dev.child.pid!, 'SIGINT'));

    expect(await dev.exited(), dev.output()).toBe(0);
    const output = dev.output();
    expect(output).toContain('stopping as soon as it has started');
    const privateUrl = output.match(/redis {8}(redis:\/\/\S+)/)?.[1];
    expect(privateUrl, output).toBeDefined();
    expect(await redisAnswers(privateUrl!)).toBe(false);
  }, 60_000);
});

describe('tributary dev that cannot start', () => {
  it('stops the private Redis it had started, then exits 1 saying why', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const dev = runCli(['dev'], {
        cwd: await project('port-taken'),
        env: { PORT: String(port), REDIS_URL: `redis://127.0.0.1:${await freePort()}` },
      });
      expect(await dev.exited(), dev.output()).toBe(1);
      expect(dev.stderr()).toContain('EADDRINUSE');
      const privateUrl = dev.output().match(/private Redis at (redis:\/\/\S+)/)?.[1];
      expect(privateUrl, dev.output()).toBeDefined();
      expect(await redisAnswers(privateUrl!)).toBe(false);
    } finally {
      taken.close();
    }
  }, 60_000);
});
