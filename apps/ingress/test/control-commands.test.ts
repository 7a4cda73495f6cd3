import { describe, expect, it } from 'vitest';
import { parseControlText } from '../src/control-commands.js';

describe('parseControlText', () => {
  it.each([
    ['/cancel', 'cancel'],
    ['/cancel-all', 'cancel-all'],
    ['/reset', 'reset'],
    ['  /reset \n', 'reset'],
    ['/cancel@tributary_bot', 'cancel'],
    ['/cancel@Tributary_Bot', 'cancel'],
  ])('%j is the command %s', (text, command) => {
    expect(parseControlText(text, 'tributary_bot')).toBe(command);
  });

  it.each([
    '/cancel please',
    'please /cancel',
    '/cancelled',
    '/resets',
    'cancel',
    '',
    '/cancel-all-now',
    '/cancel@other_bot',
  ])('%j is data, not a command', (text) => {
    expect(parseControlText(text, 'tributary_bot')).toBeUndefined();
  });
});
