import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dataNodes, type RedisClient } from '../connections.js';
import { QueueError } from '../errors.js';
import { ScriptStatus } from './status.js';

/** What a script returns: a flat array whose first element is a ScriptStatus. */
export type RawReply = (string | number | null)[];

/**
 * One Lua script: its KEYS and ARGV by name, in the order they travel, and the one function that turns
 * its reply into a typed result. The names are all a caller or the Lua body ever sees (`K.state`,
 * `A.owner`); positions exist only in this declaration.
 */
export interface ScriptCall<Key extends string, Arg extends string, Result> {
  readonly name: string;
  readonly keys: readonly Key[];
  readonly args: readonly Arg[];
  decode(reply: Reply): Result;
}

export function defineScript<const Key extends string, const Arg extends string, Result>(
  call: ScriptCall<Key, Arg, Result>,
): ScriptCall<Key, Arg, Result> {
  return call;
}

/** A script's reply as its decoder reads it; any status the decoder does not expect fails loudly. */
export class Reply {
  constructor(
    private readonly script: string,
    private readonly raw: RawReply,
  ) {}

  get status(): ScriptStatus {
    return this.raw[0] as ScriptStatus;
  }

  /** Elements of the reply, the status included. */
  get length(): number {
    return this.raw.length;
  }

  num(at: number): number {
    return Number(this.raw[at]);
  }

  str(at: number): string {
    return String(this.raw[at]);
  }

  unexpected(): QueueError {
    const status = ScriptStatus[this.status] ?? String(this.raw[0]);
    return new QueueError('UNEXPECTED_STATUS', `script ${this.script} answered unexpected status ${status}`);
  }
}

// The .lua files sit beside this module, the functions several scripts share in lib/.
const scriptsDir = new URL('./', import.meta.url);

/** The files a Lua source includes, from its first line `-- uses: core, batches` (lib/<name>.lua). */
function includesOf(source: string): string[] {
  const first = source.slice(0, source.indexOf('\n'));
  return /^-- uses: /.test(first)
    ? first
        .slice('-- uses: '.length)
        .split(',')
        .map((name) => name.trim())
    : [];
}

/** The shared files `source` includes, each after the files it includes in turn, each once. */
function includedLua(source: string, included: Set<string>): string[] {
  const texts: string[] = [];
  for (const name of includesOf(source)) {
    if (included.has(name)) continue;
    included.add(name);
    const text = readFileSync(new URL(`lib/${name}.lua`, scriptsDir), 'utf8');
    texts.push(...includedLua(text, included), text);
  }
  return texts;
}

type AnyCall = ScriptCall<string, string, unknown>;

/** `controlCancelAll` lives in `control-cancel-all-4.lua`: the file name shows the key count. */
export function scriptFile(call: AnyCall): string {
  return `${call.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-${call.keys.length}.lua`;
}

/** Binds each name to its position: `local K = { state = KEYS[1], ... }`, the same for ARGV. */
function preamble(call: AnyCall): string {
  const table = (names: readonly string[], source: string) =>
    `{ ${names.map((name, i) => `${name} = ${source}[${i + 1}]`).join(', ')} }`;
  return `local K = ${table(call.keys, 'KEYS')}\nlocal A = ${table(call.args, 'ARGV')}\n`;
}

const sourceCache = new Map<AnyCall, string>();

/** What Redis runs: the files it includes, the name bindings, the script's body. Read once per process. */
export function scriptSource(call: AnyCall): string {
  let source = sourceCache.get(call);
  if (source === undefined) {
    const body = readFileSync(new URL(scriptFile(call), scriptsDir), 'utf8');
    source = `${includedLua(body, new Set()).join('\n')}\n${preamble(call)}${body}`;
    sourceCache.set(call, source);
  }
  return source;
}

/** One script as Redis knows it: its text, and the SHA1 Redis caches it by. */
interface LoadedScript {
  readonly lua: string;
  readonly sha: string;
  readonly numberOfKeys: number;
}

/**
 * The scripts of one ioredis client, run by EVALSHA, and by EVAL when Redis answers NOSCRIPT (a restarted
 * Redis has an empty script cache; EVAL caches the script again). Not through `defineCommand`: every
 * ioredis pipeline (the sweeper's, BullMQ's) copies each command defined on its client, two properties
 * each, about 20 µs a pipeline with the queue's scripts.
 */
export class Scripts {
  private readonly scripts = new Map<string, LoadedScript>();

  constructor(
    private readonly redis: RedisClient,
    calls: readonly AnyCall[],
  ) {
    for (const call of calls) {
      const lua = scriptSource(call);
      const sha = createHash('sha1').update(lua).digest('hex');
      this.scripts.set(call.name, { lua, sha, numberOfKeys: call.keys.length });
    }
  }

  /**
   * Loads the scripts Redis lacks (a restarted Redis, a promoted replica has none) into every server
   * that holds data, and returns how many it loaded.
   */
  async ensureLoaded(): Promise<number> {
    const list = [...this.scripts.values()];
    let loaded = 0;
    for (const node of await dataNodes(this.redis)) {
      const present = (await node.script('EXISTS', ...list.map((s) => s.sha))) as number[];
      const missing = list.filter((_, i) => present[i] !== 1);
      for (const { lua } of missing) await node.script('LOAD', lua);
      loaded += missing.length;
    }
    return loaded;
  }

  /** Runs `call` with its keys and arguments taken by name (extra fields are ignored). */
  async run<Key extends string, Arg extends string, Result>(
    call: ScriptCall<Key, Arg, Result>,
    keys: { readonly [K in Key]: string },
    args: { readonly [A in Arg]: string | number },
  ): Promise<Result> {
    const script = this.scripts.get(call.name);
    if (!script) throw new Error(`script ${call.name} is not defined on this connection`);
    const argv: [number, ...(string | number)[]] = [script.numberOfKeys];
    for (const name of call.keys) argv.push(keys[name]);
    for (const name of call.args) argv.push(args[name]);
    let raw: RawReply;
    try {
      raw = (await this.redis.evalsha(script.sha, ...argv)) as RawReply;
    } catch (error) {
      // The script did not run: sending its text runs it once and caches it again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      raw = (await this.redis.eval(script.lua, ...argv)) as RawReply;
    }
    return call.decode(new Reply(call.name, raw));
  }
}
