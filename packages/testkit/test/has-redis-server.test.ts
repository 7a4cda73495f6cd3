// Whether `tributary dev` may start a private redis-server: decided by running `redis-server --version`.
// A terminal's Ctrl-C signals that probe too, and a probe killed that way ran: it is installed.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasRedisServer } from '../src/index.js';

let bin: string;
const path = process.env.PATH;
beforeEach(async () => {
  bin = await mkdtemp(join(tmpdir(), 'has-redis-server-'));
  process.env.PATH = bin;
});
afterEach(async () => {
  process.env.PATH = path;
  await rm(bin, { recursive: true, force: true });
});

async function fakeRedisServer(script: string): Promise<void> {
  const file = join(bin, 'redis-server');
  await writeFile(file, `#!/bin/sh\n${script}\n`);
  await chmod(file, 0o755);
}

describe('hasRedisServer', () => {
  it('is true for a redis-server that answers --version', async () => {
    await fakeRedisServer('echo "Redis server v=7.2.0"');
    expect(hasRedisServer()).toBe(true);
  });

  it('is true when the probe is interrupted by Ctrl-C', async () => {
    // Were the signal ignored, the script would go on and fail.
    await fakeRedisServer('kill -INT $$\nexit 1');
    expect(hasRedisServer()).toBe(true);
  });

  it('is false when there is none, or it fails', async () => {
    expect(hasRedisServer()).toBe(false);
    await fakeRedisServer('exit 1');
    expect(hasRedisServer()).toBe(false);
  });
});
