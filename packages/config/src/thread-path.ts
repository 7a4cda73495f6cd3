import { createHash } from 'node:crypto';

/** A segment longer than this is cut and suffixed with a hash of the whole, to stay a valid file name. */
const MAX_SEGMENT = 96;

/**
 * One path segment from any text: letters, digits, `-` and `.` stay, every other byte becomes `_xx`
 * (hex), so distinct values give distinct segments. A leading dot is escaped too (no `.`, `..` or
 * hidden directories) and the empty text is `_`; no result contains a separator.
 */
export function safeSegment(value: string): string {
  if (value === '') return '_';
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    const plain = /[A-Za-z0-9-]/.test(char) || (char === '.' && out !== '');
    out += plain ? char : `_${byte.toString(16).padStart(2, '0')}`;
  }
  if (out.length <= MAX_SEGMENT) return out;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, 16);
  return `${out.slice(0, MAX_SEGMENT - 17)}-${hash}`;
}

/**
 * The parts of a thread key (`<platform>:<channel…>:<thread>`): the first part, the last, and what lies
 * between. A key with fewer parts uses its last part for what is missing (`discord:<channel>` is its own
 * thread).
 */
export function conversationParts(threadKey: string): { platform: string; channel: string; thread: string } {
  const parts = threadKey.split(':');
  const platform = parts.length > 1 ? parts[0]! : '';
  const thread = parts.at(-1)!;
  const channel = parts.length > 2 ? parts.slice(1, -1).join(':') : thread;
  return { platform, channel, thread };
}

/**
 * Where a thread's files live under a workspace root: `{platform}/{channel}/{thread}`, each part one
 * safe segment, so no thread key reaches outside its own folder or into another thread's.
 */
export function threadPath(threadKey: string): string {
  const { platform, channel, thread } = conversationParts(threadKey);
  return [platform, channel, thread].map(safeSegment).join('/');
}
