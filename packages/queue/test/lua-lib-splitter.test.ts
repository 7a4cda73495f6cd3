import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LuaLib, luaCode } from '../src/lua/lib-splitter.js';
import { ALL_SCRIPTS } from '../src/lua/queue-calls.js';
import { scriptSource } from '../src/lua/scripts.js';

const lib = readFileSync(new URL('../src/lua/lib.lua', import.meta.url), 'utf8');

/** What Redis's Lua offers by name, and the keywords that may stand before a parenthesis. */
const PROVIDED = new Set(
  'tonumber tostring type pairs ipairs unpack error pcall select next assert and or not if elseif while until return in function'.split(
    ' ',
  ),
);

/** Names a Lua source calls as functions that it does not declare itself. */
function undeclaredCalls(lua: string): string[] {
  const source = luaCode(lua);
  const declared = new Set([
    ...[...source.matchAll(/\blocal function (\w+)/g)].map((m) => m[1]!),
    ...[...source.matchAll(/\blocal (\w+)\s*=/g)].map((m) => m[1]!),
  ]);
  const called = [...source.matchAll(/(?<![\w.:])([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1]!);
  return [...new Set(called)].filter((name) => !declared.has(name) && !PROVIDED.has(name));
}

/**
 * Uses of lib.lua's names, in any form (a call, a constant, a function passed as a value), that no
 * declaration above them in the composed source makes visible.
 */
function usedBeforeDeclared(lua: string, names: readonly string[]): string[] {
  const source = luaCode(lua);
  const wrong: string[] = [];
  for (const name of names) {
    const declaredAt = source.search(new RegExp(`^local (?:function )?${name}\\b`, 'm'));
    for (const use of source.matchAll(new RegExp(`(?<![\\w.:])${name}\\b`, 'g'))) {
      if (declaredAt === -1 || use.index < declaredAt) wrong.push(`${name} at ${use.index}`);
    }
  }
  return wrong;
}

describe('the lib.lua a script is given', () => {
  it('declares every function each script calls, directly or through lib.lua', () => {
    for (const call of ALL_SCRIPTS) expect(undeclaredCalls(scriptSource(call)), call.name).toEqual([]);
  });

  it('declares each lib.lua name a script uses above its first use', () => {
    const { names } = new LuaLib(lib);
    for (const call of ALL_SCRIPTS) {
      expect(usedBeforeDeclared(scriptSource(call), names), call.name).toEqual([]);
    }
  });

  it('takes no name from a comment, in the body or in lib.lua', () => {
    const luaLib = new LuaLib(lib);
    expect(luaLib.forBody('-- keep_alive would be wrong here\nreturn 1')).toBe('');
    // keep_alive's comment names expire_idle; its code does not call it.
    expect(lib).toMatch(/^--.*expire_idle[\s\S]*?\nlocal function keep_alive/m);
    expect(luaLib.forBody('keep_alive(K)')).not.toContain('local function expire_idle');
  });

  it('refuses a lib.lua it could split wrongly', () => {
    const refusal = (lua: string) => {
      try {
        new LuaLib(lua);
        return 'accepted';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(refusal('local function f()\n  return 1\n-- a comment in column 0\n  return 2\nend')).toBe(
      'lib.lua line 4: code outside a declaration:   return 2',
    );
    expect(refusal('local function f()\n  return 1\n  end\nlocal function g()\nend')).toBe(
      "lib.lua: f does not end with a column-0 'end' before the next comment",
    );
    expect(refusal('local function f(a,\n  b)\n  return a\n  end\nlocal y = 1')).toMatch(/f does not end/);
    expect(refusal('local function f()\nlocal x = 1\n  return x\nend')).toMatch(/f does not end/);
    expect(refusal('local T = { -- open\n  x = 1,\n  }\nlocal y = 1')).toBe(
      "lib.lua: T does not end with a column-0 '}' before the next comment",
    );
    expect(refusal('function g()\nend')).toMatch(/^lib.lua line 1: only declarations/);
    expect(refusal('local a, b = 1, 2')).toMatch(/^lib.lua line 1: one name per top-level declaration/);
    expect(refusal('local function h() return 1 end\nlocal T = {\n  x = 1,\n}')).toBe('accepted');
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
    const given = new LuaLib(lib).forBody('return delete_entries(K.inbox, {})');
    expect(given).toMatch(
      /^-- Deletes stream `entries`[^\n]*\n--[^\n]*\nlocal function delete_entries\(stream, entries\)/,
    );
  });
});
