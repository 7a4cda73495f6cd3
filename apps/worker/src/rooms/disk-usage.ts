import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What a walk found: bytes on disk, and whether it saw everything or stopped at its entry cap. */
export interface DiskUsage {
  bytes: number;
  complete: boolean;
}

/** Entries looked at together: enough to hide a shared volume's latency, few enough for the fd limit. */
const PARALLEL = 32;

function gone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  // The agent may delete while we walk, or make a folder we cannot enter: neither is an error here.
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'EPERM';
}

/**
 * Bytes the files under `dir` take on disk, as `du` counts them (allocated blocks, each hard-linked
 * file once). Symbolic links are not followed and count nothing: a link out of the room is not the
 * room's. At most `maxEntries` entries are looked at, so a room of millions of files costs a bounded
 * walk; past that the result is what was seen, a lower bound.
 */
export async function diskUsage(dir: string, maxEntries: number): Promise<DiskUsage> {
  let bytes = 0;
  let seen = 0;
  const linked = new Set<string>();
  const folders = [dir];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      if (gone(error)) continue;
      throw error;
    }
    for (let first = 0; first < entries.length; first += PARALLEL) {
      const chunk = entries.slice(first, first + PARALLEL).filter((entry) => !entry.isSymbolicLink());
      if (seen + chunk.length > maxEntries) return { bytes, complete: false };
      seen += chunk.length;
      const infos = await Promise.all(
        chunk.map((entry) => {
          const path = join(folder, entry.name);
          return lstat(path).then(
            (info) => ({ path, info }),
            (error: unknown) => {
              if (gone(error)) return undefined;
              throw error;
            },
          );
        }),
      );
      for (const found of infos) {
        if (!found) continue;
        const { path, info } = found;
        if (info.isSymbolicLink()) continue;
        if (info.nlink > 1 && !info.isDirectory()) {
          const id = `${info.dev}:${info.ino}`;
          if (linked.has(id)) continue;
          linked.add(id);
        }
        bytes += info.blocks * 512;
        if (info.isDirectory()) folders.push(path);
      }
    }
  }
  return { bytes, complete: true };
}
