import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import type { RedisHandle } from './redis-handle.js';
import { waitFor } from './wait-for.js';

export interface StartRedisOptions {
  /** Always start a private server, even when REDIS_URL is set (needed to kill or restart it). */
  private?: boolean;
  appendfsync?: 'always' | 'everysec' | 'no';
  /** Keep the AOF in this folder and leave it there on stop (the dev runner's data survives restarts). */
  dataDir?: string;
  /**
   * Start the server in a process group of its own, out of reach of the terminal's Ctrl-C, so the
   * process that started it stops it when it is done with it (the dev runner: after its worker has
   * handed its threads back).
   */
  ownProcessGroup?: boolean;
  env?: NodeJS.ProcessEnv;
}

/**
 * REDIS_URL when set; otherwise a private redis-server with AOF in a temp folder; otherwise a
 * Testcontainers Redis when a Docker engine answers.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisHandle> {
  const env = options.env ?? process.env;
  if (!options.private && env.REDIS_URL) return externalRedis(env.REDIS_URL);
  if (hasBinary('redis-server')) return startPrivateRedis(options);
  const { startContainerRedis } = await import('./redis-container.js');
  return startContainerRedis();
}

function hasBinary(name: string): boolean {
  return spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0;
}

function externalRedis(url: string): RedisHandle {
  const refuse = async (): Promise<never> => {
    throw new Error(
      'this Redis comes from REDIS_URL; start the harness with { private: true } to control it',
    );
  };
  return { url, owned: false, kill: refuse, restart: refuse, wipe: refuse, stop: async () => {} };
}

/** Whether a redis-server binary is on PATH. */
export function hasRedisServer(): boolean {
  return hasBinary('redis-server');
}

async function startPrivateRedis({
  appendfsync = 'everysec',
  dataDir,
  ownProcessGroup = false,
}: StartRedisOptions): Promise<RedisHandle> {
  const port = await freePort();
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'tributary-redis-')));
  await mkdir(dir, { recursive: true });
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const launch = async () => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      appendfsync,
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      '--protected-mode',
      'yes',
    ];
    const started = spawn('redis-server', args, { stdio: 'ignore', detached: ownProcessGroup });
    child = started;
    started.once('exit', () => {
      if (child === started) child = undefined;
    });
    await waitFor(() => redisAnswers(url), { what: `redis-server on port ${port}`, timeoutMs: 10_000 });
  };

  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const running = child;
    if (!running) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };

  await launch();
  return {
    url,
    owned: true,
    kill,
    restart: launch,
    wipe: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
    },
    stop: async () => {
      await kill('SIGTERM');
      if (!dataDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis answers PING at `url` (one attempt, no retries). */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
