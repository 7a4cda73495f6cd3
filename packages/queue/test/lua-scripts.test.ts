import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_SCRIPTS } from '../src/lua/queue-calls.js';
import { Reply, scriptFile, scriptSource } from '../src/lua/scripts.js';
import { ScriptStatus } from '../src/lua/status.js';

const scriptsDir = new URL('../src/lua/', import.meta.url);
const core = readFileSync(new URL('lib/core.lua', scriptsDir), 'utf8');

/** lib/core.lua's `local STATUS = { OK = 0, ... }` as name → code. */
function luaStatusTable(): Map<string, number> {
  const table = /local STATUS = \{([^}]*)\}/.exec(core)?.[1];
  if (!table) throw new Error('lib/core.lua has no STATUS table');
  return new Map(
    [...table.matchAll(/([A-Z_]+)\s*=\s*(-?\d+)/g)].map(([, name, code]) => [name!, Number(code)]),
  );
}

/** `BacklogFull` → `BACKLOG_FULL`. */
const luaName = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();

describe('script calls', () => {
  it('keeps the Lua status table and the TypeScript enum in step', () => {
    const ts = new Map(
      Object.entries(ScriptStatus)
        .filter(([, code]) => typeof code === 'number')
        .map(([name, code]) => [luaName(name), code as number]),
    );
    expect(luaStatusTable()).toEqual(ts);
  });

  it('declares every script file once, with as many keys as its file name says', () => {
    const files = readdirSync(scriptsDir).filter((file) => file.endsWith('.lua'));
    expect(ALL_SCRIPTS.map(scriptFile).sort()).toEqual(files.sort());
  });

  it('lets the Lua bodies use only the keys and arguments their declaration names', () => {
    for (const call of ALL_SCRIPTS) {
      const body = readFileSync(new URL(scriptFile(call), scriptsDir), 'utf8');
      // Positions belong to the declaration: a body reads K.<name> and A.<name>, never KEYS[i]/ARGV[i].
      expect(body, call.name).not.toMatch(/\b(KEYS|ARGV)\[/);
      const used = (table: string) =>
        new Set([...body.matchAll(new RegExp(`\\b${table}\\.(\\w+)`, 'g'))].map((m) => m[1]!));
      for (const key of used('K')) expect(call.keys, `${call.name} K.${key}`).toContain(key);
      for (const arg of used('A')) expect(call.args, `${call.name} A.${arg}`).toContain(arg);
      expect(new Set(call.keys).size, `${call.name} keys are unique`).toBe(call.keys.length);
      expect(new Set(call.args).size, `${call.name} args are unique`).toBe(call.args.length);
    }
  });

  it('binds each name to its position in the loaded source', () => {
    const source = scriptSource(ALL_SCRIPTS.find((call) => call.name === 'renew')!);
    expect(source).toContain('local K = { state = KEYS[1], run = KEYS[2] }');
    expect(source).toContain(
      'local A = { member = ARGV[1], owner = ARGV[2], fence = ARGV[3], leaseMs = ARGV[4] }',
    );
  });

  it('fails loudly on a status a script does not answer', () => {
    for (const call of ALL_SCRIPTS) {
      expect(() => call.decode(new Reply(call.name, [99])), call.name).toThrow(
        `script ${call.name} answered unexpected status 99`,
      );
    }
  });
});
