import { describe, expect, it } from 'vitest';
import { parseControlText } from '../src/control-commands.js';

describe('parseControlText', () => {
  it.each([
    ['/cancel', 'cancel'],
    ['/cancel-all', 'cancel-all'],
    ['/reset', 'reset'],
    ['  /reset \n', 'reset'],
    ['/cancel@tributary_bot', 'cancel'],
  ])('%j is the command %s', (text, command) => {
    expect(parseControlText(text)).toBe(command);
  });

  it.each(['/cancel please', 'please /cancel', '/cancelled', '/resets', 'cancel', '', '/cancel-all-now'])(
    '%j is data, not a command',
    (text) => {
      expect(parseControlText(text)).toBeUndefined();
    },
  );
});
