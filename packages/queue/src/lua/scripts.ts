import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dataNodes, type RedisClient } from '../connections.js';
import { QueueError } from '../errors.js';
import { LuaLib } from './lib-splitter.js';
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

// The .lua files sit beside this module.
const scriptsDir = new URL('./', import.meta.url);
const lib = new LuaLib(readFileSync(new URL('lib.lua', scriptsDir), 'utf8'));

type AnyCall = ScriptCall<string, string, unknown>;

/** `dropBuffered` lives in `drop-buffered-2.lua`: the file name shows the key count. */
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

/** What Redis runs: what it uses of lib.lua, the name bindings, the script's body. Read once per process. */
export function scriptSource(call: AnyCall): string {
  let source = sourceCache.get(call);
  if (source === undefined) {
    const body = readFileSync(new URL(scriptFile(call), scriptsDir), 'utf8');
    source = `${lib.forBody(body)}\n${preamble(call)}${body}`;
    sourceCache.set(call, source);
  }
  return source;
}

/**
 * The scripts bound to one ioredis client through `defineCommand`, which runs them by EVALSHA and falls
 * back to EVAL on NOSCRIPT (a restarted Redis has an empty script cache).
 */
export class Scripts {
  private readonly sources = new Map<string, string>();

  constructor(
    private readonly redis: RedisClient,
    calls: readonly AnyCall[],
  ) {
    for (const call of calls) {
      const lua = scriptSource(call);
      this.sources.set(call.name, lua);
      redis.defineCommand(commandName(call), { numberOfKeys: call.keys.length, lua });
    }
  }

  /**
   * Loads the scripts Redis lacks (a restarted Redis, a promoted replica has none) into every server
   * that holds data, and returns how many it loaded.
   */
  async ensureLoaded(): Promise<number> {
    const list = [...this.sources.values()];
    const shas = list.map((lua) => createHash('sha1').update(lua).digest('hex'));
    let loaded = 0;
    for (const node of await dataNodes(this.redis)) {
      const present = (await node.script('EXISTS', ...shas)) as number[];
      const missing = list.filter((_, i) => present[i] !== 1);
      for (const lua of missing) await node.script('LOAD', lua);
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
    const command = (
      this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<RawReply>>
    )[commandName(call)];
    if (!command) throw new Error(`script ${call.name} is not defined on this connection`);
    const raw = await command.call(
      this.redis,
      ...call.keys.map((name) => keys[name]),
      ...call.args.map((name) => args[name]),
    );
    return call.decode(new Reply(call.name, raw));
  }
}

function commandName(call: AnyCall): string {
  return `tributary_${call.name}`;
}
