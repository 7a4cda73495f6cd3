import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type HistoryEntry,
  parseSessionLog,
  recordLines,
  SESSION_FILE_SUFFIX,
  type SessionLine,
  type SessionRecord,
  type SessionSettings,
  serialiseLine,
  sessionsDir,
} from './session-log.js';

// Session ids arrive from the client in session/load and session/resume; never let one name a path.
const SESSION_ID = /^[A-Za-z0-9-]{1,64}$/;

/** A store looks for stale session files at most this often (on session creation). */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Per-session JSON Lines files under `<dir>/sessions` (session-log.ts), appended to, never rewritten:
 * a turn costs two short appends however long the conversation. Appends go through one queue, so the
 * lines of one process land in the order it made them; another process sharing the folder appends
 * whole lines of its own (O_APPEND). A file not written for `retentionMs` is deleted: the broker has
 * moved on from that session (its thread went quiet and its record expired, or it was replaced), and
 * without pruning the folder grows by a file per session forever.
 */
export class SessionStore {
  readonly #dir: string;
  #writes: Promise<void> = Promise.resolve();
  #prunedAt = 0;
  /** Sessions whose file was read ending in a cut-short line: their next append starts a new line. */
  readonly #torn = new Set<string>();

  constructor(
    stateDir: string,
    private readonly retentionMs = 7 * 24 * 60 * 60 * 1000,
  ) {
    this.#dir = sessionsDir(stateDir);
  }

  /** Deletes the session files (and any other files) last written more than `retentionMs` ago. */
  async prune(now = Date.now()): Promise<number> {
    this.#prunedAt = now;
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    let pruned = 0;
    for (const name of names) {
      const file = join(this.#dir, name);
      const info = await stat(file).catch(() => undefined);
      if (!info?.isFile() || now - info.mtimeMs <= this.retentionMs) continue;
      await rm(file, { force: true });
      pruned++;
    }
    return pruned;
  }

  async create(cwd: string): Promise<SessionRecord> {
    if (Date.now() - this.#prunedAt >= PRUNE_INTERVAL_MS) await this.prune();
    const record: SessionRecord = {
      sessionId: randomUUID(),
      cwd,
      createdAt: new Date().toISOString(),
      history: [],
    };
    await this.#queue(() => this.#writeWhole(record));
    return record;
  }

  async read(sessionId: string): Promise<SessionRecord | undefined> {
    if (!SESSION_ID.test(sessionId)) return undefined;
    let text: string;
    try {
      text = await readFile(this.#file(sessionId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const parsed = parseSessionLog(text);
    if (parsed?.tornTail) this.#torn.add(sessionId);
    return parsed?.record;
  }

  /** The stored sessions opened in `cwd` (all of them without it), for session/list. */
  async list(cwd?: string): Promise<SessionRecord[]> {
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    const ids = names.filter((name) => name.endsWith(SESSION_FILE_SUFFIX));
    const records = await Promise.all(
      ids.map((name) => this.read(name.slice(0, -SESSION_FILE_SUFFIX.length))),
    );
    return records.filter(
      (record): record is SessionRecord => record !== undefined && (cwd === undefined || record.cwd === cwd),
    );
  }

  /** Adds `entry` to the record's history and to its file. */
  appendEntry(record: SessionRecord, entry: HistoryEntry): Promise<void> {
    record.history.push(entry);
    return this.#append(record, { kind: 'history', ...entry });
  }

  /** Applies the settings that differ from the record's and appends them; nothing when none do. */
  update(record: SessionRecord, settings: SessionSettings): Promise<void> {
    const changed = Object.fromEntries(
      Object.entries(settings).filter(
        ([key, value]) => JSON.stringify(record[key as keyof SessionSettings]) !== JSON.stringify(value),
      ),
    ) as SessionSettings;
    if (Object.keys(changed).length === 0) return Promise.resolve();
    Object.assign(record, changed);
    return this.#append(record, { kind: 'settings', ...changed });
  }

  /** Serialised, so the lines of one process keep their order and a rewrite never races an append. */
  #queue(write: () => Promise<void>): Promise<void> {
    const queued = this.#writes.then(write);
    this.#writes = queued.catch(() => undefined);
    return queued;
  }

  #append(record: SessionRecord, line: SessionLine): Promise<void> {
    return this.#queue(async () => {
      const newline = this.#torn.delete(record.sessionId) ? '\n' : '';
      // No O_CREAT: a file pruned while its session stayed open is written again whole, never
      // continued headless.
      try {
        await appendFile(this.#file(record.sessionId), newline + serialiseLine(line), {
          flag: constants.O_WRONLY | constants.O_APPEND,
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        await this.#writeWhole(record);
      }
    });
  }

  async #writeWhole(record: SessionRecord): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    await writeFile(this.#file(record.sessionId), recordLines(record).map(serialiseLine).join(''));
  }

  #file(sessionId: string): string {
    return join(this.#dir, `${sessionId}${SESSION_FILE_SUFFIX}`);
  }
}
