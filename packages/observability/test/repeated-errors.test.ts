import { describe, expect, it } from 'vitest';
import { RepeatedErrors } from '../src/repeated-errors.js';

function recorder() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const log = (level: string) => (fields: object, message: string) =>
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { lines, logger: { warn: log('warn'), info: log('info') } };
}

describe('RepeatedErrors', () => {
  it('logs a condition once, then a counted line a minute, then its end', () => {
    let now = 0;
    const { lines, logger } = recorder();
    const errors = new RepeatedErrors(logger, 'doorbell worker error', () => now);
    for (let i = 0; i < 1_000; i++) {
      now += 100;
      errors.report(new Error(`MOVED ${i} 127.0.0.1:${7000 + (i % 3)}`));
    }
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['warn', 'doorbell worker error'],
      ['warn', 'doorbell worker error still failing'],
    ]);
    expect(lines[1]!.fields).toMatchObject({ repeats: 600 });
    errors.cleared();
    errors.cleared();
    expect(lines.at(-1)).toMatchObject({ level: 'info', message: 'doorbell worker error: recovered' });
    expect(lines).toHaveLength(3);
  });

  it('logs a different condition at once', () => {
    const { lines, logger } = recorder();
    const errors = new RepeatedErrors(logger, 'sweep failed', () => 0);
    errors.report(new Error('CLUSTERDOWN The cluster is down'));
    errors.report(new Error('CLUSTERDOWN The cluster is down'));
    errors.report(new Error('Connection is closed.'));
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(2);
  });
});
