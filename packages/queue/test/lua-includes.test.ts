import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_SCRIPTS } from '../src/lua/queue-calls.js';
import { scriptFile, scriptSource } from '../src/lua/scripts.js';

const luaDir = new URL('../src/lua/', import.meta.url);
const sharedFiles = readdirSync(new URL('lib/', luaDir)).map((file) => file.replace(/\.lua$/, ''));

/** What Redis's Lua offers by name, and the keywords that may stand before a parenthesis. */
const PROVIDED = new Set(
  'tonumber tostring type pairs ipairs unpack error pcall select next assert and or not if elseif while until return in function'.split(
    ' ',
  ),
);

/** Lua source with its comments and quoted strings blanked (the scripts have no long strings). */
function code(lua: string): string {
  return lua
    .split('\n')
    .map((line) => line.replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"/g, "''").replace(/--.*$/, ''))
    .join('\n');
}

const declaredIn = (lua: string) => [
  ...[...code(lua).matchAll(/^local (?:function )?(\w+)/gm)].map((m) => m[1]!),
];

/** Every top-level name the shared files declare. */
const sharedNames = sharedFiles.flatMap((file) =>
  declaredIn(readFileSync(new URL(`lib/${file}.lua`, luaDir), 'utf8')),
);

describe('the shared Lua a script includes', () => {
  it('names, in each file’s first line, only shared files that exist', () => {
    const files = [
      ...ALL_SCRIPTS.map((call) => scriptFile(call)),
      ...sharedFiles.map((file) => `lib/${file}.lua`),
    ];
    for (const file of files) {
      const first = readFileSync(new URL(file, luaDir), 'utf8').split('\n', 1)[0]!;
      const uses = first.startsWith('-- uses: ') ? first.slice(9).split(', ') : [];
      for (const used of uses) expect(sharedFiles, `${file} uses ${used}`).toContain(used);
    }
  });

  it('declares every function each script calls', () => {
    for (const call of ALL_SCRIPTS) {
      const source = code(scriptSource(call));
      const declared = new Set([
        ...[...source.matchAll(/\blocal function (\w+)/g)].map((m) => m[1]!),
        ...[...source.matchAll(/\blocal (\w+)\s*=/g)].map((m) => m[1]!),
      ]);
      const called = [...source.matchAll(/(?<![\w.:])([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1]!);
      const undeclared = [...new Set(called)].filter((name) => !declared.has(name) && !PROVIDED.has(name));
      expect(undeclared, call.name).toEqual([]);
    }
  });

  it('declares each shared name a script uses above its first use, once', () => {
    for (const call of ALL_SCRIPTS) {
      const source = code(scriptSource(call));
      const declarations = declaredIn(source);
      expect(new Set(declarations).size, `${call.name} declares each name once`).toBe(declarations.length);
      for (const name of sharedNames) {
        const declaredAt = source.search(new RegExp(`^local (?:function )?${name}\\b`, 'm'));
        for (const use of source.matchAll(new RegExp(`(?<![\\w.:])${name}\\b`, 'g'))) {
          expect(declaredAt, `${call.name}: ${name} used at ${use.index}`).toBeGreaterThanOrEqual(0);
          expect(use.index, `${call.name}: ${name} used before it is declared`).toBeGreaterThanOrEqual(
            declaredAt,
          );
        }
      }
    }
  });

  it('includes a shared file once, after the files it includes', () => {
    const commit = scriptSource(ALL_SCRIPTS.find((call) => call.name === 'commit')!);
    // thread-life includes batches, which includes core: each appears once, core first.
    const at = (name: string) => commit.indexOf(readFileSync(new URL(`lib/${name}.lua`, luaDir), 'utf8'));
    expect(at('core')).toBe(0);
    expect(at('batches')).toBeGreaterThan(at('core'));
    expect(at('thread-life')).toBeGreaterThan(at('batches'));
    expect(commit.split('local function now_ms(').length).toBe(2);
  });
});
