import type { DestinationStream } from 'pino';

const LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warning',
  50: 'error',
  60: 'fatal',
};
/** pino's own fields, and those shown in the line's head rather than after it. */
const HEAD = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component']);

/**
 * A pino destination for a person at a terminal (`tributary dev`): each JSON line becomes
 * `warning worker: agent protocol stream closed… (pid=123)`, an error as its message.
 */
export function readableLog(write: (line: string) => void): DestinationStream {
  return {
    write(json: string) {
      const entry = JSON.parse(json) as Record<string, unknown>;
      const level = LEVELS[entry.level as number] ?? String(entry.level);
      const component = typeof entry.component === 'string' ? `${entry.component}: ` : '';
      const fields = Object.entries(entry)
        .filter(([key]) => !HEAD.has(key))
        .map(([key, value]) => `${key}=${describe(value)}`);
      write(`${level} ${component}${entry.msg ?? ''}${fields.length ? ` (${fields.join(', ')})` : ''}`);
    },
  };
}

function describe(value: unknown): string {
  if (value && typeof value === 'object' && 'message' in value) return String(value.message);
  return typeof value === 'string' ? value : JSON.stringify(value);
}
