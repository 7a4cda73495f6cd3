import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
/** The one owner of Tributary's Redis state, and the test harness that starts Redis servers. */
const OWNERS = new Set(['packages/queue', 'packages/testkit']);
const REDIS_CLIENTS = ['ioredis', 'bullmq'];

function workspaces(): string[] {
  return ['apps', 'packages'].flatMap((group) =>
    readdirSync(join(root, group)).map((name) => `${group}/${name}`),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|js)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** What in a source text talks to Redis around the store: client imports, hand-built keys. */
function redisUseIn(text: string): string[] {
  const imports = [...text.matchAll(/from '([^']+)'|import\('([^']+)'\)/g)].map((m) => m[1] ?? m[2]!);
  const found = imports.filter((name) => REDIS_CLIENTS.some((client) => name.startsWith(client)));
  // The key layout is the store's: a key built elsewhere would be a command issued around it.
  if (/\b(threadKeys|workerKeys|bucketKeys)\(/.test(text)) found.push('a Tributary key name');
  return found;
}

describe('one owner for Redis', () => {
  const others = workspaces().filter((workspace) => !OWNERS.has(workspace));

  it('leaves no other workspace a runtime dependency on a Redis client (tests may inspect Redis)', () => {
    const offenders = others.filter((workspace) => {
      const manifest = JSON.parse(readFileSync(join(root, workspace, 'package.json'), 'utf8'));
      return Object.keys(manifest.dependencies ?? {}).some((name) => REDIS_CLIENTS.includes(name));
    });
    expect(offenders).toEqual([]);
  });

  it('leaves no other source file a Redis client or Tributary key name', () => {
    const offenders = others.flatMap((workspace) =>
      sourceFiles(join(root, workspace, 'src')).flatMap((file) =>
        redisUseIn(readFileSync(file, 'utf8')).map((what) => `${relative(root, file)}: ${what}`),
      ),
    );
    expect(offenders).toEqual([]);
  });

  it('recognises a Redis client import and a key built by hand', () => {
    expect(redisUseIn("import type { Redis } from 'ioredis';\nconst k = threadKeys(p, 64, t);")).toEqual([
      'ioredis',
      'a Tributary key name',
    ]);
    expect(redisUseIn("const { Queue } = await import('bullmq');")).toEqual(['bullmq']);
    expect(
      redisUseIn("import { Store } from '@tributary/queue';\nstore.queue.intake.enqueue(t, m);"),
    ).toEqual([]);
  });
});
