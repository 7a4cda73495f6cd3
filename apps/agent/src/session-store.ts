import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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

/** Per-session JSON files under `<dir>/sessions`, written atomically (temp file + rename). */
export class SessionStore {
  readonly #dir: string;
  #writes: Promise<void> = Promise.resolve();

  constructor(stateDir: string) {
    this.#dir = join(stateDir, 'sessions');
  }

  async create(cwd: string): Promise<SessionRecord> {
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
