import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * Loads every `<name>-<keys>.lua` file under ./scripts with ioredis `defineCommand`, which runs them by
 * EVALSHA and falls back to EVAL on NOSCRIPT (a restarted Redis has an empty script cache).
 */
export type ScriptName =
  | 'enqueue'
  | 'claim'
  | 'renew'
  | 'commit'
  | 'fail'
  | 'abandon'
  | 'revive'
  | 'pause'
  | 'resume'
  | 'dropBuffered'
  | 'reset'
  | 'redrive'
  | 'affinityPush';

export type ScriptReply = (string | number | null)[];

interface ScriptSource {
  command: string;
  numberOfKeys: number;
  lua: string;
}

const scriptsDir = new URL('./scripts/', import.meta.url);

function commandName(file: string): { name: ScriptName; numberOfKeys: number } {
  const match = /^([a-z-]+)-(\d+)\.lua$/.exec(file);
  if (!match) throw new Error(`script file ${file} is not named <name>-<number of keys>.lua`);
  const name = match[1]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as ScriptName;
  return { name, numberOfKeys: Number(match[2]) };
}

function loadSources(): Map<ScriptName, ScriptSource> {
  const lib = readFileSync(new URL('lib.lua', scriptsDir), 'utf8');
  const sources = new Map<ScriptName, ScriptSource>();
  for (const file of readdirSync(scriptsDir)) {
    if (file === 'lib.lua' || !file.endsWith('.lua')) continue;
    const { name, numberOfKeys } = commandName(file);
    const body = readFileSync(new URL(file, scriptsDir), 'utf8');
    sources.set(name, { command: `tributary_${name}`, numberOfKeys, lua: `${lib}\n${body}` });
  }
  return sources;
}

const sources = loadSources();

/** The scripts bound to one ioredis client. */
export class Scripts {
  constructor(private readonly redis: Redis) {
    for (const source of sources.values()) {
      redis.defineCommand(source.command, { numberOfKeys: source.numberOfKeys, lua: source.lua });
    }
  }

  /** Loads the scripts Redis lacks (a restarted Redis has none) and returns how many it loaded. */
  async ensureLoaded(): Promise<number> {
    const list = [...sources.values()];
    const shas = list.map((source) => createHash('sha1').update(source.lua).digest('hex'));
    const present = (await this.redis.script('EXISTS', ...shas)) as number[];
    const missing = list.filter((_, i) => present[i] !== 1);
    for (const source of missing) await this.redis.script('LOAD', source.lua);
    return missing.length;
  }

  async run(
    name: ScriptName,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<ScriptReply> {
    const source = sources.get(name);
    if (!source) throw new Error(`no script named ${name}`);
    if (keys.length !== source.numberOfKeys) {
      throw new Error(`script ${name} takes ${source.numberOfKeys} keys, got ${keys.length}`);
    }
    const command = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<ScriptReply>>)[
      source.command
    ]!;
    return command.call(this.redis, ...keys, ...args);
  }
}
