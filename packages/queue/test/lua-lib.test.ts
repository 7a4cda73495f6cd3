import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LuaLib } from '../src/lua-lib.js';
import { ALL_SCRIPTS } from '../src/script-calls.js';
import { scriptSource } from '../src/scripts.js';

const lib = readFileSync(new URL('../src/scripts/lib.lua', import.meta.url), 'utf8');

/** What Redis's Lua offers by name, and the keywords that may stand before a parenthesis. */
const PROVIDED = new Set(
  'tonumber tostring type pairs ipairs unpack error pcall select next assert and or not if elseif while until return in function'.split(
    ' ',
  ),
);

/** The source with its comments and string literals blanked (lib.lua has no long strings). */
function codeOnly(source: string): string {
  return source
    .split('\n')
    .map((line) => {
      let code = '';
      let quote: string | undefined;
      for (let i = 0; i < line.length; i++) {
        const c = line[i]!;
        if (quote) {
          if (c === '\\') i++;
          else if (c === quote) quote = undefined;
        } else if (c === '-' && line[i + 1] === '-') {
          break;
        } else if (c === "'" || c === '"') {
          quote = c;
          code += ' ';
        } else {
          code += c;
        }
      }
      return code;
    })
    .join('\n');
}

/** Names a Lua source calls as functions that it does not declare itself. */
function undeclaredCalls(lua: string): string[] {
  const source = codeOnly(lua);
  const declared = new Set([
    ...[...source.matchAll(/\blocal function (\w+)/g)].map((m) => m[1]!),
    ...[...source.matchAll(/\blocal (\w+)\s*=/g)].map((m) => m[1]!),
  ]);
  const called = [...source.matchAll(/(?<![\w.:])([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1]!);
  return [...new Set(called)].filter((name) => !declared.has(name) && !PROVIDED.has(name));
}

describe('the lib.lua a script is given', () => {
  it('declares every function each script calls, directly or through lib.lua', () => {
    for (const call of ALL_SCRIPTS) expect(undeclaredCalls(scriptSource(call)), call.name).toEqual([]);
  });

  it('holds only what the body names, with what that needs, in lib.lua’s order', () => {
    const luaLib = new LuaLib(lib);
    const given = luaLib.forBody(
      'local epoch = reschedule(K, A.member, now_ms())\nreturn { STATUS.OK, epoch }',
    );
    const names = [...given.matchAll(/^local (?:function )?(\w+)/gm)].map((m) => m[1]);
    expect(names).toEqual(['STATUS', 'now_ms', 'reschedule']);
    expect(luaLib.forBody('return 1')).toBe('');
  });

  it('keeps a declaration’s comment with it', () => {
    const given = new LuaLib(lib).forBody('return id_after(A.read)');
    expect(given).toMatch(
      /^-- Smallest stream id strictly greater than `id`[^\n]*\nlocal function id_after\(id\)/,
    );
  });
});
