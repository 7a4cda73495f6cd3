import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AgentRoom, AgentRooms } from '@tributary/acp';
import { threadPath, type WorkspaceOnReset } from '@tributary/config';
import type { Logger } from 'pino';

const PARTS = ['workspace', 'home'] as const;

function roomAt(dir: string): AgentRoom {
  return { workspace: join(dir, 'workspace'), home: join(dir, 'home') };
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
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
        this.logger.warn(
          { err: error, from: source, to: target },
          'a file of a thread was not moved into its room; it stays where it was',
        );
      }
    }
    return moved;
  }
}
