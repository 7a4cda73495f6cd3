import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { nodeEntryCommand } from '@tributary/acp';
import { stillRunning } from '@tributary/acp/process-tree';
import { deletePrefix, type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { encodeCommand, parseReport, type WardenReport } from '../src/warden/warden-protocol.js';

const PRESENCE_TTL_MS = 1_000;
const OWNER = 'dead-worker:1:abc';

let redisServer: RedisHandle;
let redis: Redis;
let prefix: string;
const started: ChildProcess[] = [];

beforeEach(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  prefix = uniquePrefix('survivors');
});

afterEach(async () => {
  for (const child of started) child.kill('SIGKILL');
  started.length = 0;
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await redisServer.stop();
});

/**
 * The warden of a worker run as an unprivileged user (`nobody`), as an operator may run workers: a
 * process of another user in one of its agents' groups is one it cannot kill (EPERM), like a tool that
 * ran a setuid program, or one in another PID namespace.
 */
async function startWarden(): Promise<{ warden: ChildProcess; reports: WardenReport[] }> {
  const { command, args } = nodeEntryCommand(import.meta.url, '../src/warden/warden-main.ts');
  const warden = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', command, ...args], {
    env: {
      ...process.env,
      TRIBUTARY_WARDEN: JSON.stringify({
        redisUrl: redisServer.url,
        prefix,
        owner: OWNER,
        presence: '1',
        presenceTtlMs: PRESENCE_TTL_MS,
        stallToleranceMs: 5_000,
      }),
    },
    stdio: ['pipe', 'ignore', 'inherit', 'pipe'],
    detached: true,
  });
  started.push(warden);
  const reports: WardenReport[] = [];
  createInterface({ input: warden.stdio[3] as Readable }).on('line', (line) => {
    const report = parseReport(line);
    if (report) reports.push(report);
  });
  warden.stdin!.write(encodeCommand({ kind: 'pulse', presence: '1' }));
  await waitFor(() => reports.some((r) => r.kind === 'present'), { what: 'the warden to announce' });
  return { warden, reports };
}

const keys = () => {
  const base = `${prefix}:{w${encodeURIComponent(OWNER)}}`;
  return { presence: `${base}:presence`, survivors: `${base}:survivors` };
};

it('keeps a dead worker present while an agent process it could not kill runs, and lets go once it ends', {
  timeout: 60_000,
}, async () => {
  const { warden } = await startWarden();
  // Listened for from the start: the warden may exit before the test sees the keys go.
  const exited = once(warden, 'exit');
  // Root's, in a process group of its own: the unprivileged warden's SIGKILL is refused.
  const survivor = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
  started.push(survivor);
  await once(survivor, 'spawn');
  warden.stdin!.write(encodeCommand({ kind: 'watch', pgid: survivor.pid! }));
  // The worker dies: its end of the warden's stdin closes without a goodbye.
  warden.stdin!.end();

  await waitFor(async () => (await redis.exists(keys().survivors)) === 1, {
    what: 'the warden to say which processes survived',
  });
  expect(JSON.parse((await redis.get(keys().survivors))!)).toEqual({ pids: [survivor.pid] });
  // Three TTLs on, the presence still stands: it is refreshed, not left to expire.
  const heldUntil = performance.now() + 3 * PRESENCE_TTL_MS;
  let lapsed = false;
  await waitFor(
    async () => {
      if ((await redis.exists(keys().presence)) === 0) lapsed = true;
      return performance.now() >= heldUntil;
    },
    { what: 'three presence TTLs', timeoutMs: 10 * PRESENCE_TTL_MS, intervalMs: 50 },
  );
  expect(lapsed, 'the presence lapsed while a survivor ran').toBe(false);
  expect(stillRunning([survivor.pid!])).toEqual([survivor.pid]);

  // An operator ends it: the warden lets the worker go, and exits.
  survivor.kill('SIGKILL');
  await waitFor(async () => (await redis.exists(keys().presence, keys().survivors)) === 0, {
    what: 'the presence and the survivors withdrawn',
  });
  await exited;
});
