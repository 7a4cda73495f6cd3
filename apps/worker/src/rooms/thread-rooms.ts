import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AgentRoom, AgentRooms } from '@tributary/acp';
import { threadPath, type WorkspaceOnReset } from '@tributary/config';
import type { Logger } from 'pino';
import { type DiskUsage, diskUsage } from './disk-usage.js';

const PARTS = ['workspace', 'home'] as const;
/** Beside a room's workspace and home, out of the agent's sight: its thread and size after its last turn. */
const RECORD = 'room.json';
/** Where expired rooms wait for deletion: on the same file system, so parking one is a rename. */
const EXPIRED = '.expired';

/** What a room's last turn left: whose room it is (paths cannot be read back into thread keys) and its size. */
export interface RoomRecord {
  thread: string;
  bytes: number;
}

/** A room found under the root, with when its thread last ended a turn in it (its record's mtime). */
export interface FoundRoom extends RoomRecord {
  dir: string;
  usedAt: number;
}

function roomAt(dir: string): AgentRoom {
  return { workspace: join(dir, 'workspace'), home: join(dir, 'home') };
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

/** A room's record and its mtime; undefined without one, or with one cut short by a crash. */
async function readRecord(dir: string): Promise<{ record: RoomRecord; usedAt: number } | undefined> {
  const path = join(dir, RECORD);
  try {
    const [info, text] = await Promise.all([stat(path), readFile(path, 'utf8')]);
    const record = JSON.parse(text) as Partial<RoomRecord>;
    if (typeof record.thread !== 'string' || typeof record.bytes !== 'number') return undefined;
    return { record: { thread: record.thread, bytes: record.bytes }, usedAt: info.mtimeMs };
  } catch (error) {
    if (error instanceof SyntaxError || (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Each thread's workspace and agent home under the workspace root, `{platform}/{channel}/{thread}/`
 * (docs/adr/0044), and the rooms of warm spares under `.spares/` on the same file system, so that a
 * spare's room becomes its thread's by renames alone.
 */
export class ThreadRooms implements AgentRooms {
  constructor(
    readonly root: string,
    private readonly onReset: WorkspaceOnReset,
    private readonly logger: Logger,
    /** Each file of a thread left outside its room (it stays parked, named in the log). */
    private readonly onStuck: () => void = () => {},
  ) {}

  dirOf(thread: string): string {
    return join(this.root, threadPath(thread));
  }

  /** The thread's room, whether or not it exists yet. */
  roomOf(thread: string): AgentRoom {
    return roomAt(this.dirOf(thread));
  }

  async thread(thread: string): Promise<AgentRoom> {
    const dir = this.dirOf(thread);
    await this.#recover(dir);
    const room = roomAt(dir);
    await Promise.all(PARTS.map((part) => mkdir(room[part], { recursive: true })));
    return room;
  }

  async spare(): Promise<AgentRoom> {
    const room = roomAt(join(this.root, '.spares', randomUUID()));
    await Promise.all(PARTS.map((part) => mkdir(room[part], { recursive: true })));
    return room;
  }

  /**
   * The spare's folder takes the thread's place, and what the thread had moves into it. Each step is a
   * rename; the thread's old folder is parked as `<thread>.moving` meanwhile, so a crash part-way
   * leaves the thread's files where the next `thread` or `adopt` finds and merges them.
   */
  async adopt(spare: AgentRoom, thread: string): Promise<void> {
    const from = dirname(spare.workspace);
    const dir = this.dirOf(thread);
    await this.#recover(dir);
    await mkdir(dirname(dir), { recursive: true });
    const parked = `${dir}.moving`;
    const had = await stat(dir).then(
      () => true,
      () => false,
    );
    if (had) await rename(dir, parked);
    await rename(from, dir);
    if (had) await this.#recover(dir);
  }

  async discard(spare: AgentRoom): Promise<void> {
    await rm(dirname(spare.workspace), { recursive: true, force: true });
  }

  /** Called once a thread's reset is noticed, before its fresh session opens. */
  async reset(thread: string): Promise<void> {
    if (this.onReset !== 'delete') return;
    const dir = this.dirOf(thread);
    await rm(dir, { recursive: true, force: true });
    this.logger.info({ thread, dir }, 'workspace and agent home of a reset thread deleted');
  }

  /** Bytes the thread's workspace and agent home take on disk, walking at most `maxEntries` entries. */
  measure(thread: string, maxEntries: number): Promise<DiskUsage> {
    return diskUsage(this.dirOf(thread), maxEntries);
  }

  /** Notes the room's size at the end of a turn; the record's mtime is the room's last use. */
  async record(thread: string, bytes: number): Promise<void> {
    const dir = this.dirOf(thread);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, RECORD), JSON.stringify({ thread, bytes } satisfies RoomRecord));
  }

  async recorded(thread: string): Promise<RoomRecord | undefined> {
    return (await readRecord(this.dirOf(thread)))?.record;
  }

  /** Every room with a record, at `{platform}/{channel}/{thread}` under the root. */
  async *recordedRooms(): AsyncGenerator<FoundRoom> {
    // Thread paths never start with a dot (safeSegment), so `.spares` and `.expired` are not rooms.
    for (const platform of (await entries(this.root)).filter((name) => !name.startsWith('.'))) {
      for (const channel of await entries(join(this.root, platform))) {
        for (const thread of await entries(join(this.root, platform, channel))) {
          if (thread.endsWith('.moving')) continue;
          const dir = join(this.root, platform, channel, thread);
          const found = await readRecord(dir);
          // A record that names another thread than its folder's (an unsandboxed agent can write it)
          // must not get that thread's expiry applied to this room.
          if (found && this.dirOf(found.record.thread) === dir)
            yield { dir, ...found.record, usedAt: found.usedAt };
        }
      }
    }
  }

  /**
   * Deletes the room of a thread whose keys expired: parked under `.expired` by a rename first, then
   * `expired` is asked again, so a thread claimed in between gets its room back instead (whatever
   * runs in a room follows its renames, so nothing is deleted from under a turn). True if deleted.
   */
  async expire(room: FoundRoom, expired: (thread: string) => Promise<boolean>): Promise<boolean> {
    const parked = join(this.root, EXPIRED, `${Date.now()}-${randomUUID()}`);
    await mkdir(dirname(parked), { recursive: true });
    try {
      await rename(room.dir, parked);
    } catch (error) {
      // Another worker's sweep took it first.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    return this.#finishExpiry(parked, room.thread, expired);
  }

  /** Finishes the expiries a sweep parked and never finished (its worker died), once surely abandoned. */
  async finishParked(
    expired: (thread: string) => Promise<boolean>,
    abandonedAfterMs: number,
  ): Promise<number> {
    let deleted = 0;
    for (const name of await entries(join(this.root, EXPIRED))) {
      if (!(Date.now() - Number.parseInt(name, 10) >= abandonedAfterMs)) continue;
      const parked = join(this.root, EXPIRED, name);
      const found = await readRecord(parked);
      if (found === undefined) await rm(parked, { recursive: true, force: true });
      else if (await this.#finishExpiry(parked, found.record.thread, expired)) deleted++;
    }
    return deleted;
  }

  async #finishExpiry(
    parked: string,
    thread: string,
    expired: (thread: string) => Promise<boolean>,
  ): Promise<boolean> {
    if (await expired(thread)) {
      await rm(parked, { recursive: true, force: true });
      this.logger.info({ thread }, 'workspace and agent home of an expired thread deleted');
      return true;
    }
    // A room made meanwhile holds its workspace and home, so the first rename cannot replace it; the
    // second parks the files where the thread's next start merges them (#recover).
    const dir = this.dirOf(thread);
    await mkdir(dirname(dir), { recursive: true });
    try {
      await rename(parked, dir).catch(() => rename(parked, `${dir}.moving`));
      this.logger.info({ thread }, 'a thread came back while its room was being deleted; its room is kept');
    } catch (error) {
      this.onStuck();
      this.logger.warn(
        { err: error, thread, parked },
        'a thread came back while its room was being deleted, and its files could not be put back; they stay parked',
      );
    }
    return false;
  }

  /** Moves what a parked folder (an interrupted or finishing adopt) holds into the thread's room. */
  async #recover(dir: string): Promise<void> {
    const parked = `${dir}.moving`;
    if (!(await stat(parked).catch(() => undefined))) return;
    await mkdir(dir, { recursive: true });
    if (await this.#merge(parked, dir)) await rm(parked, { recursive: true, force: true });
  }

  /**
   * Moves everything under `from` into `to`. A folder on both sides is merged; a file on both sides is
   * the thread's (`from`): the spare's copy was written by an agent start that knew nothing of the
   * thread, while the thread's holds its sessions. False if anything could not be moved: it stays.
   */
  async #merge(from: string, to: string): Promise<boolean> {
    let moved = true;
    for (const name of await entries(from)) {
      const source = join(from, name);
      const target = join(to, name);
      const [sourceInfo, targetInfo] = await Promise.all([
        stat(source).catch(() => undefined),
        stat(target).catch(() => undefined),
      ]);
      try {
        if (sourceInfo?.isDirectory() && targetInfo?.isDirectory()) {
          moved = (await this.#merge(source, target)) && moved;
        } else {
          if (targetInfo?.isDirectory()) await rm(target, { recursive: true, force: true });
          await rename(source, target);
        }
      } catch (error) {
        moved = false;
        this.onStuck();
        this.logger.warn(
          { err: error, from: source, to: target },
          'a file of a thread was not moved into its room; it stays where it was',
        );
      }
    }
    return moved;
  }
}
