import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where `tributary dev` tells `tributary send` how to reach the running stack. */
export interface DevStack {
  ingressUrl: string;
  gatewaySecret: string;
  /** The local reply receiver: `GET <repliesUrl>/_calls?since=&waitMs=` long-polls what the worker posted. */
  repliesUrl: string;
}

export function devDataDir(cwd = process.cwd()): string {
  return join(cwd, '.tributary');
}

const file = (cwd?: string) => join(devDataDir(cwd), 'dev.json');

export async function writeDevStack(stack: DevStack): Promise<void> {
  await mkdir(devDataDir(), { recursive: true });
  // It holds the dev gateway secret: readable by the user only.
  await writeFile(file(), `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });
}

export async function readDevStack(): Promise<DevStack | undefined> {
  try {
    return JSON.parse(await readFile(file(), 'utf8')) as DevStack;
  } catch {
    return undefined;
  }
}

export async function removeDevStack(): Promise<void> {
  await rm(file(), { force: true });
}
