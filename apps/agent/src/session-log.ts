/**
 * The built-in agent's session file: JSON Lines under `<stateDir>/sessions/<sessionId>.jsonl`, a
 * header line, then one line per history entry or change of the session's settings, appended as they
 * happen. A turn appends two lines whatever the length of the conversation: its cost does not grow
 * with the history. Anything may read a session back with `parseSessionLog` or `readStoredSessions`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContentBlock, McpServer } from '@agentclientprotocol/sdk';

/** `steered`: a prompt the client sent into a running turn (docs/adr/0040), not one that started a turn. */
export type HistoryEntry =
  | { role: 'user'; prompt: ContentBlock[]; steered?: true }
  | { role: 'agent'; text: string };

/** The settings of a session that change after it is created; the latest line that sets one wins. */
export interface SessionSettings {
  /** Set by session/close, so tests can see that the client released the session. */
  closedAt?: string;
  /** The MCP servers the client passed when it last opened the session (new, load or resume). */
  mcpServers?: McpServer[];
  /** The session's mode, when the agent offers modes. */
  modeId?: string;
}

/** One session as read back from its file: enough to replay it after a restart. */
export interface SessionRecord extends SessionSettings {
  sessionId: string;
  cwd: string;
  createdAt: string;
  history: HistoryEntry[];
}

/** One line of a session file. */
export type SessionLine =
  | { kind: 'session'; sessionId: string; cwd: string; createdAt: string }
  | ({ kind: 'history' } & HistoryEntry)
  | ({ kind: 'settings' } & SessionSettings);

export const SESSION_FILE_SUFFIX = '.jsonl';

export function sessionsDir(stateDir: string): string {
  return join(stateDir, 'sessions');
}

/** A line as written: one JSON object and its newline. */
export function serialiseLine(line: SessionLine): string {
  return `${JSON.stringify(line)}\n`;
}

/** The lines that write `record` out whole: what a lost file is written again from. */
export function recordLines(record: SessionRecord): SessionLine[] {
  const { sessionId, cwd, createdAt, history, ...settings } = record;
  return [
    { kind: 'session', sessionId, cwd, createdAt },
    ...history.map((entry): SessionLine => ({ kind: 'history', ...entry })),
    ...(Object.keys(settings).length > 0 ? [{ kind: 'settings', ...settings } as SessionLine] : []),
  ];
}

function parseLine(text: string): SessionLine | undefined {
  try {
    const line = JSON.parse(text) as SessionLine;
    return typeof line === 'object' && line !== null ? line : undefined;
  } catch {
    return undefined;
  }
}

/** A session read back, and whether its file ends in a line cut short (a write a crash interrupted). */
export interface ParsedSession {
  record: SessionRecord;
  tornTail: boolean;
}

/**
 * Replays a session file. A line that does not parse (the last one, when a crash cut an append short,
 * or one that a later append ran into) is skipped, so a crash costs at most the line being written.
 * Undefined when the header is missing.
 */
export function parseSessionLog(text: string): ParsedSession | undefined {
  let record: SessionRecord | undefined;
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    const line = parseLine(raw);
    if (line === undefined) continue;
    if (line.kind === 'session') {
      const { kind: _, ...header } = line;
      record ??= { ...header, history: [] };
    } else if (record === undefined) {
    } else if (line.kind === 'history') {
      const { kind: _, ...entry } = line;
      record.history.push(entry as HistoryEntry);
    } else if (line.kind === 'settings') {
      const { kind: _, ...settings } = line;
      Object.assign(record, settings);
    }
  }
  return record && { record, tornTail: text !== '' && !text.endsWith('\n') };
}

/** Every session kept under `stateDir`, as the agent would read it back (tests read them this way). */
export async function readStoredSessions(stateDir: string): Promise<SessionRecord[]> {
  const dir = sessionsDir(stateDir);
  const files = (await readdir(dir).catch(() => [])).filter((file) => file.endsWith(SESSION_FILE_SUFFIX));
  const parsed = await Promise.all(
    files.map(async (file) => parseSessionLog(await readFile(join(dir, file), 'utf8'))),
  );
  return parsed.flatMap((session) => (session ? [session.record] : []));
}
