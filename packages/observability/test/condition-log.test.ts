import { describe, expect, it } from 'vitest';
import { ConditionLog } from '../src/condition-log.js';

function recorder() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const log = (level: string) => (fields: object, message: string) =>
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { lines, logger: { warn: log('warn'), info: log('info') } };
}

describe('ConditionLog, one condition per message', () => {
  it('logs a condition once, then a counted line a minute, then its end', () => {
    let now = 0;
    const { lines, logger } = recorder();
    const errors = new ConditionLog(logger, 'doorbell worker error', { now: () => now });
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
    const errors = new ConditionLog(logger, 'sweep failed', { now: () => 0 });
    errors.report(new Error('CLUSTERDOWN The cluster is down'));
    errors.report(new Error('CLUSTERDOWN The cluster is down'));
    errors.report(new Error('Connection is closed.'));
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(2);
  });
});

type Step = ['tally' | 'report', string] | ['cleared'] | ['tick', number];

/**
 * Plays `steps` against a ConditionLog kept as ingress keeps its Redis outage (one condition whatever
 * fails, refused requests tallied) on a fake clock; returns its log lines, events and state.
 */
function playOutage(steps: Step[]) {
  const lines: string[] = [];
  let clock = 0;
  const outage = new ConditionLog(
    {
      warn: (fields, message) => lines.push(`warn ${message} ${JSON.stringify(fields)}`),
      info: (fields, message) => lines.push(`info ${message} ${JSON.stringify(fields)}`),
    },
    { started: 'outage started', ongoing: 'outage goes on', ended: 'outage ended' },
    {
      conditionOf: () => 'redis',
      tally: 'refusedRequests',
      onStarted: () => lines.push('started'),
      onEnded: () => lines.push('ended'),
      now: () => clock,
    },
  );
  for (const step of steps) {
    if (step[0] === 'tick') clock += step[1];
    else if (step[0] === 'cleared') outage.cleared();
    else outage[step[0]](step[1]);
  }
  return { lines, active: outage.active };
}

const STARTED = 'warn outage started';
const ENDED = 'info outage ended';

describe('ConditionLog, one condition whatever fails', () => {
  it.each<[string, Step[], string[], boolean]>([
    ['says nothing while nothing fails', [['cleared'], ['cleared']], [], false],
    [
      'warns once however many failures, then ends once with duration and tally',
      [
        ['tally', 'Connection is closed.'],
        ['tick', 500],
        ['tally', 'Connection is closed.'],
        ['report', 'connect ECONNREFUSED'],
        ['tally', 'Command timed out'],
        ['tick', 1500],
        ['cleared'],
        ['cleared'],
      ],
      [
        `${STARTED} {"err":"Connection is closed."}`,
        'started',
        `${ENDED} {"durationMs":2000,"repeats":3,"refusedRequests":3}`,
        'ended',
      ],
      false,
    ],
    [
      'starts on a failure that is not tallied, counting nothing under the tally for it',
      [['report', 'connect ECONNREFUSED'], ['report', 'again'], ['tick', 10], ['cleared']],
      [
        `${STARTED} {"err":"connect ECONNREFUSED"}`,
        'started',
        `${ENDED} {"durationMs":10,"repeats":1,"refusedRequests":0}`,
        'ended',
      ],
      false,
    ],
    [
      'tells two outages apart',
      [['tally', 'a'], ['cleared'], ['tick', 5], ['tally', 'b']],
      [
        `${STARTED} {"err":"a"}`,
        'started',
        `${ENDED} {"durationMs":0,"repeats":0,"refusedRequests":1}`,
        'ended',
        `${STARTED} {"err":"b"}`,
        'started',
      ],
      true,
    ],
    [
      'tells a long outage again once a minute, not once per failure',
      [
        ['tally', 'a'],
        ['tick', 30_000],
        ['tally', 'b'],
        ['tick', 30_000],
        ['tally', 'c'],
        ['tally', 'd'],
      ],
      [`${STARTED} {"err":"a"}`, 'started', 'warn outage goes on {"err":"c","repeats":2,"sinceMs":60000}'],
      true,
    ],
  ])('%s', (_, steps, lines, active) => {
    expect(playOutage(steps)).toEqual({ lines, active });
  });
});
