import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContentBlock, McpServer } from '@agentclientprotocol/sdk';

export type HistoryEntry = { role: 'user'; prompt: ContentBlock[] } | { role: 'agent'; text: string };

/** One session as persisted in the state dir: enough to replay it after a restart. */
export interface SessionRecord {
  sessionId: string;
  cwd: string;
  createdAt: string;
  /** Set by session/close, so tests can see that the client released the session. */
  closedAt?: string;
  history: HistoryEntry[];
  /** The MCP servers the client passed when it last opened the session (new, load or resume). */
  mcpServers?: McpServer[];
  /** The session's mode, when the agent offers modes. */
  modeId?: string;
}

// Session ids arrive from the client in session/load and session/resume; never let one name a path.
const SESSION_ID = /^[A-Za-z0-9-]{1,64}$/;

/** A store looks for stale session files at most this often (on session creation). */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Per-session JSON files under `<dir>/sessions`, written atomically (temp file + rename). A file not
 * written for `retentionMs` is deleted: the broker has moved on from that session (its thread went
 * quiet and its record expired, or it was replaced), and without pruning the folder grows by a file
 * per session forever.
 */
export class SessionStore {
  readonly #dir: string;
  #writes: Promise<void> = Promise.resolve();
  #prunedAt = 0;

  constructor(
    stateDir: string,
    private readonly retentionMs = 7 * 24 * 60 * 60 * 1000,
  ) {
    this.#dir = join(stateDir, 'sessions');
  }

  /** Deletes the session files (and leftover temp files) last written more than `retentionMs` ago. */
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
    await this.save(record);
    return record;
  }

  async read(sessionId: string): Promise<SessionRecord | undefined> {
    if (!SESSION_ID.test(sessionId)) return undefined;
    try {
      return JSON.parse(await readFile(this.#file(sessionId), 'utf8')) as SessionRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Writes are serialised so two saves of one record never interleave their renames. */
  save(record: SessionRecord): Promise<void> {
    const snapshot = JSON.stringify(record, null, 2);
    const write = this.#writes.then(async () => {
      await mkdir(this.#dir, { recursive: true });
      const temp = `${this.#file(record.sessionId)}.${process.pid}.tmp`;
      await writeFile(temp, snapshot);
      await rename(temp, this.#file(record.sessionId));
    });
    this.#writes = write.catch(() => undefined);
    return write;
  }

  #file(sessionId: string): string {
    return join(this.#dir, `${sessionId}.json`);
  }
}
