import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { waitFor } from './wait-for.js';

export type Appendfsync = 'always' | 'everysec' | 'no';

/** One redis-server process on loopback with AOF in `dir`, which can be killed and started again. */
export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  /** Starts the server (again, on the same port and folder) and waits until it answers PING. */
  launch(): Promise<void>;
  /**
   * Kills the server (default SIGKILL) and waits for it to exit; a no-op when it is not running.
   * SIGSTOP and SIGCONT freeze and thaw it instead (connected, answering nothing meanwhile).
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  readonly running: boolean;
}

export function redisProcess(
  port: number,
  dir: string,
  appendfsync: Appendfsync,
  extraArgs: readonly string[] = [],
  /** Out of reach of the terminal's Ctrl-C (see StartRedisOptions.ownProcessGroup). */
  ownProcessGroup = false,
  /** Clients must AUTH with it; the URL carries it, as REDIS_URL does in a deployment. */
  password?: string,
): RedisProcess {
  const url = password ? `redis://:${password}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
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
    ...(password ? ['--requirepass', password] : []),
    ...extraArgs,
  ];
  return {
    port,
    url,
    get running() {
      return child !== undefined;
    },
    async launch() {
      const started = spawn('redis-server', args, { stdio: 'ignore', detached: ownProcessGroup });
      child = started;
      started.once('exit', () => {
        if (child === started) child = undefined;
      });
      await waitFor(() => redisAnswers(url), { what: `redis-server on port ${port}`, timeoutMs: 10_000 });
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      const running = child;
      if (!running) return;
      if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
        running.kill(signal);
        return;
      }
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill(signal);
      await exited;
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
