import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Where `tributary dev` tells `tributary send` how to reach the running stack. */
export interface DevStack {
  ingressUrl: string;
  gatewaySecret: string;
  /** The local reply receiver: `GET <repliesUrl>/_calls?since=&waitMs=` long-polls what the worker posted. */
  repliesUrl: string;
  /** The admin listener and a token for it, for `tributary admin` and the console. */
  adminUrl: string;
  adminToken: string;
  /** The folder `tributary dev` runs in (the one holding `.tributary/`). */
  root: string;
}

export function devDataDir(cwd = process.cwd()): string {
  return join(cwd, '.tributary');
}

const file = (cwd?: string) => join(devDataDir(cwd), 'dev.json');

export async function writeDevStack(stack: Omit<DevStack, 'root'>): Promise<void> {
  await mkdir(devDataDir(), { recursive: true });
  // It holds the dev gateway secret: readable by the user only.
  await writeFile(file(), `${JSON.stringify({ ...stack, root: process.cwd() }, null, 2)}\n`, { mode: 0o600 });
}

/** The stack started in `cwd` or the nearest folder above it, as `git` finds its repository. */
export async function readDevStack(cwd = process.cwd()): Promise<DevStack | undefined> {
  for (let dir = cwd; ; dir = dirname(dir)) {
    try {
      return { root: dir, ...JSON.parse(await readFile(file(dir), 'utf8')) } as DevStack;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

export async function removeDevStack(): Promise<void> {
  await rm(file(), { force: true });
}
