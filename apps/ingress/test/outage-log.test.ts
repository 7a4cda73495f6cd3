import { describe, expect, it } from 'vitest';
import { OutageLog } from '../src/outage-log.js';

type Step = ['refused' | 'connectionFailed', string] | ['answered'] | ['tick', number];

/** Plays `steps` against an OutageLog on a fake clock; returns its log lines and metric events. */
function play(steps: Step[]) {
  const lines: string[] = [];
  let clock = 0;
  const outage = new OutageLog(
    {
      warn: (fields, message) => lines.push(`warn ${message} ${JSON.stringify(fields)}`),
      info: (fields, message) => lines.push(`info ${message} ${JSON.stringify(fields)}`),
    },
    { started: () => lines.push('started'), ended: () => lines.push('ended') },
    () => clock,
  );
  for (const step of steps) {
    if (step[0] === 'tick') clock += step[1];
    else if (step[0] === 'answered') outage.answered();
    else outage[step[0]](step[1]);
  }
  return { lines, down: outage.down };
}

const STARTED = 'warn redis outage started: requests get 503 until Redis answers';
const ENDED = 'info redis outage ended: Redis answers again';

describe('OutageLog', () => {
  it.each<[string, Step[], string[], boolean]>([
    ['says nothing while Redis answers', [['answered'], ['answered']], [], false],
    [
      'warns once however many requests are refused, then ends once with duration and count',
      [
        ['refused', 'Connection is closed.'],
        ['tick', 500],
        ['refused', 'Connection is closed.'],
        ['connectionFailed', 'connect ECONNREFUSED'],
        ['refused', 'Command timed out'],
        ['tick', 1500],
        ['answered'],
        ['answered'],
      ],
      [
        `${STARTED} {"reason":"Connection is closed."}`,
        'started',
        `${ENDED} {"durationMs":2000,"refusedRequests":3}`,
        'ended',
      ],
      false,
    ],
    [
      'starts on a lost connection before any request, counting no refusal for it',
      [
        ['connectionFailed', 'connect ECONNREFUSED'],
        ['connectionFailed', 'again'],
        ['tick', 10],
        ['answered'],
      ],
      [
        `${STARTED} {"reason":"connect ECONNREFUSED"}`,
        'started',
        `${ENDED} {"durationMs":10,"refusedRequests":0}`,
        'ended',
      ],
      false,
    ],
    [
      'tells two outages apart',
      [['refused', 'a'], ['answered'], ['tick', 5], ['refused', 'b']],
      [
        `${STARTED} {"reason":"a"}`,
        'started',
        `${ENDED} {"durationMs":0,"refusedRequests":1}`,
        'ended',
        `${STARTED} {"reason":"b"}`,
        'started',
      ],
      true,
    ],
  ])('%s', (_, steps, lines, down) => {
    expect(play(steps)).toEqual({ lines, down });
  });
});
