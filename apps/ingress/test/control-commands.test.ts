import { describe, expect, it } from 'vitest';
import { parseCommandText } from '../src/control-commands.js';

describe('parseCommandText', () => {
  it.each([
    ['/cancel', 'cancel'],
    ['/cancel-all', 'cancel-all'],
    ['/reset', 'reset'],
    ['  /reset \n', 'reset'],
    ['/cancel@tributary_bot', 'cancel'],
    ['/cancel@Tributary_Bot', 'cancel'],
    ['/cancel_all', 'cancel-all'],
    ['/cancel_all@tributary_bot', 'cancel-all'],
    ['/status', 'status'],
    ['/help', 'help'],
  ])('%j is the command %s', (text, command) => {
    expect(parseCommandText(text, 'tributary_bot')).toBe(command);
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
    '/status please',
    '/helpme',
    '/cancel_',
  ])('%j is data, not a command', (text) => {
    expect(parseCommandText(text, 'tributary_bot')).toBeUndefined();
  });
});
