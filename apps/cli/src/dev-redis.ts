import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRedisCluster } from '@tributary/config';
import { loadDevHarness } from './dev-harness.js';

export interface DevRedis {
  url: string;
  /** Set when the dev runner started its own redis-server. */
  started: boolean;
  stop(): Promise<void>;
  /**
   * Signals a private redis-server to stop, synchronously: the last resort of a process that is
   * leaving without its orderly stop (a second Ctrl-C, an exit on an error).
   */
  stopNow(): void;
}

/**
 * REDIS_URL (default the local Redis) when it answers; otherwise a private redis-server with AOF under
 * the project's `.tributary/redis`, so queued messages survive a restart of the dev stack. A Redis
 * Cluster is always taken as given: the stack's readiness reports it if it is not healthy. A private
 * server writes its pid beside its AOF: a folder whose server still runs is refused, since two servers
 * writing one AOF would corrupt it.
 */
export async function devRedis(url: string, dataDir: string): Promise<DevRedis> {
  const given = { url, started: false, stop: async () => {}, stopNow: () => {} };
  if (isRedisCluster(url)) return given;
  const harness = await loadDevHarness();
  if (await harness.redisAnswers(url)) return given;
  if (!harness.hasRedisServer()) {
    throw new Error(
      `no Redis answers at ${url} and no redis-server is installed. Install Redis ≥ 7 ` +
        '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL.',
    );
  }
  const folder = join(dataDir, 'redis');
  const pidFile = join(folder, 'redis.pid');
  const running = runningPid(pidFile);
  if (running !== undefined) {
    throw new Error(
      `a redis-server (pid ${running}) still runs on ${folder}: another tributary dev in this folder, or one ` +
        `that was stopped without stopping it. Stop that tributary dev, or stop the server with \`kill ${running}\`, ` +
        'then start again.',
    );
  }
  // Bound to loopback and printed in the banner: no password, so the banner shows none.
  const server = await harness.startRedis({
    private: true,
    dataDir: folder,
    ownProcessGroup: true,
    pidFile,
    auth: false,
  });
  return {
    url: server.url,
    started: true,
    stop: () => server.stop(),
    stopNow() {
      const pid = runningPid(pidFile);
      if (pid !== undefined) process.kill(pid, 'SIGTERM');
    },
  };
}

/** The pid in `pidFile` when that process still runs; a file left by a killed server names none. */
function runningPid(pidFile: string): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  // Where the kernel says what runs under that pid, a reused pid is not our server.
  const cmdline = `/proc/${pid}/cmdline`;
  if (existsSync(cmdline) && !readFileSync(cmdline, 'utf8').includes('redis')) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}
