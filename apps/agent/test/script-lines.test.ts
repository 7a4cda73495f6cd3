import { describe, expect, it } from 'vitest';
import { ScriptError, scriptFromPrompt, withoutScriptLines } from '../src/script.js';
import { text } from './blocks.js';

describe('scriptFromPrompt', () => {
  it('merges @agent lines from every text block, later ones winning', () => {
    const script = scriptFromPrompt([
      text('first\n@agent {"chunks": 2, "delayMs": 10}'),
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      text('  @agent {"delayMs": 20}  '),
    ]);
    expect(script).toEqual({ chunks: 2, delayMs: 20 });
  });

  it('rejects unknown fields, wrong types and bad JSON loudly', () => {
    expect(() => scriptFromPrompt([text('@agent {"chunk": 2}')])).toThrow(ScriptError);
    expect(() => scriptFromPrompt([text('@agent {"chunks": -1}')])).toThrow(/chunks/);
    expect(() => scriptFromPrompt([text('@agent {chunks}')])).toThrow(/invalid JSON/);
  });

  it('ignores text that only mentions @agent', () => {
    expect(scriptFromPrompt([text('ask @agent about {this}')])).toEqual({});
  });
});

it('withoutScriptLines leaves what a person wrote', () => {
  expect(withoutScriptLines('check the build\n@agent {"chunks": 2}\nplease')).toBe('check the build\nplease');
});
