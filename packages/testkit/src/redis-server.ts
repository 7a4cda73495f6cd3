import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { startRedisCluster } from './redis-cluster.js';
import type { RedisHandle } from './redis-handle.js';
import { type Appendfsync, redisProcess } from './redis-process.js';

export interface StartRedisOptions {
  /** Always start a private server, even when REDIS_URL is set (needed to kill or restart it). */
  private?: boolean;
  appendfsync?: Appendfsync;
  /** Keep the AOF in this folder and leave it there on stop (the dev runner's data survives restarts). */
  dataDir?: string;
  /**
   * Start the server in a process group of its own, out of reach of the terminal's Ctrl-C, so the
   * process that started it stops it when it is done with it (the dev runner: after its worker has
   * handed its threads back).
   */
  ownProcessGroup?: boolean;
  /** Have the server write its pid here (and remove it when it stops cleanly). */
  pidFile?: string;
  /**
   * Require a password, carried in the handle's URL. On by default, so every suite runs with
   * authentication as deployments do (a fresh random password per server); `false` for none.
   */
  auth?: boolean;
  env?: NodeJS.ProcessEnv;
  /** More redis-server arguments for a private server (a replica's `--replicaof`). */
  args?: readonly string[];
}

/**
 * REDIS_URL when set; otherwise a private redis-server with AOF in a temp folder; otherwise a
 * Testcontainers Redis when a Docker engine answers. With TRIBUTARY_TEST_REDIS=cluster, a suite that
 * does not need to control one server (not `private`) gets a private 3-primary Redis Cluster instead,
 * so the same suites run against a Cluster.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisHandle> {
  const env = options.env ?? process.env;
  if (!options.private && env.REDIS_URL) return externalRedis(env.REDIS_URL);
  if (env.TRIBUTARY_TEST_REDIS === 'cluster' && !options.private) {
    return startRedisCluster({ appendfsync: options.appendfsync ?? 'everysec' });
  }
  if (hasBinary('redis-server')) return startPrivateRedis(options);
  const { startContainerRedis } = await import('./redis-container.js');
  return startContainerRedis();
}

function hasBinary(name: string): boolean {
  const probe = spawnSync(name, ['--version'], { stdio: 'ignore' });
  // Killed by a signal means it ran: a Ctrl-C in the terminal signals this probe too, and must not
  // read as "not installed".
  return probe.status === 0 || (probe.error === undefined && probe.signal !== null);
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
  pidFile,
  auth = true,
  args = [],
}: StartRedisOptions): Promise<RedisHandle> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'tributary-redis-')));
  await mkdir(dir, { recursive: true });
  const extraArgs = [...(pidFile ? ['--pidfile', pidFile] : []), ...args];
  const password = auth ? randomBytes(12).toString('hex') : undefined;
  const server = redisProcess(await freePort(), dir, appendfsync, extraArgs, ownProcessGroup, password);
  await server.launch();
  return {
    url: server.url,
    owned: true,
    kill: (signal) => server.kill(signal),
    restart: () => server.launch(),
    wipe: async () => {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
    },
    stop: async () => {
      await server.kill('SIGTERM');
      if (!dataDir) await rm(dir, { recursive: true, force: true });
    },
  };
}
