import type { RedisClient } from '../connections.js';
import { deadMigrate } from '../lua/dead-calls.js';
import { Scripts } from '../lua/scripts.js';
import { type DeadKind, deadSetKeys, decodeThread, threadDeadKeys } from '../thread-keys.js';
import type { KeysOf } from './keys-of.js';

/** A record of a dead set as the scripts write it (a dead letter, a dead reply), with its thread. */
export type DeadRecord = Record<string, unknown> & { thread: string };

/**
 * Reads of the bucket dead sets the scripts keep (lib/dead.lua's dead_set;
 * docs/adr/0043-dead-letters-bounded-and-grouped-by-class.md): a thread's items and the records a page of
 * a bucket index names, each a few reads however many the bucket holds. A thread whose items the previous layout still keeps has them moved first (dead-migrate):
 * an upgraded deployment reads everything it wrote before.
 */
export class DeadSets {
  private readonly scripts: Scripts;

  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
  ) {
    this.scripts = new Scripts(redis, [deadMigrate]);
  }

  /** Moves the thread's items of `kind` out of the previous layout, if it keeps any. */
  async migrate(thread: string, kind: DeadKind): Promise<void> {
    const k = this.keysOf(thread);
    await this.scripts.run(deadMigrate, threadDeadKeys(k, kind), { kind, member: k.member });
  }

  /** The thread's items of `kind`, in id order (time order). */
  async ofThread(thread: string, kind: DeadKind): Promise<DeadRecord[]> {
    await this.migrate(thread, kind);
    const k = this.keysOf(thread);
    const keys = deadSetKeys(k, kind);
    const items = await this.redis.zrangebylex(keys.threads, `[${k.member}/`, `(${k.member}0`);
    if (items.length === 0) return [];
    const records = await this.redis.hmget(keys.records, ...items);
    return records.flatMap((json) => (json === null ? [] : [{ ...JSON.parse(json), thread }]));
  }

  /** Whether the thread has a dead letter or a dead reply, in either layout. */
  async holds(thread: string): Promise<boolean> {
    const k = this.keysOf(thread);
    const counts = await Promise.all(
      (['letters', 'replies'] as const).map((kind) =>
        this.redis.zlexcount(deadSetKeys(k, kind).threads, `[${k.member}/`, `(${k.member}0`),
      ),
    );
    return counts.some((count) => count > 0) || (await this.redis.exists(k.dead, k.deadReplies)) > 0;
  }

  /**
   * The records of index items `<thread member>/<id>`, in the order given, of reason class `reasonClass`
   * when one is given; an item gone meanwhile is left out. Each item's class is read first (a short
   * string), then only the records wanted: two reads per bucket. Items the previous layout still keeps
   * have their threads moved first.
   */
  async records(items: readonly string[], kind: DeadKind, reasonClass?: string): Promise<DeadRecord[]> {
    const classes = await this.read(items, kind, 'classof');
    const left = items.filter((item) => !classes.has(item));
    if (left.length > 0) {
      const threads = new Set(left.map(threadOfItem));
      await Promise.all([...threads].map((thread) => this.migrate(thread, kind)));
      for (const [item, found] of await this.read(left, kind, 'classof')) classes.set(item, found);
    }
    const wanted = items.filter(
      (item) => classes.has(item) && (reasonClass === undefined || classes.get(item) === reasonClass),
    );
    const records = await this.read(wanted, kind, 'records');
    return wanted.flatMap((item) => {
      const json = records.get(item);
      return json === undefined ? [] : [{ ...JSON.parse(json), thread: threadOfItem(item) }];
    });
  }

  /** The values `items` have in their buckets' hash `hash`: one HMGET per bucket. */
  private async read(
    items: readonly string[],
    kind: DeadKind,
    hash: 'classof' | 'records',
  ): Promise<Map<string, string>> {
    const byKey = new Map<string, string[]>();
    for (const item of items) {
      const key = deadSetKeys(this.keysOf(threadOfItem(item)), kind)[hash];
      byKey.set(key, [...(byKey.get(key) ?? []), item]);
    }
    const found = new Map<string, string>();
    await Promise.all(
      [...byKey].map(async ([key, keyItems]) => {
        const values = await this.redis.hmget(key, ...keyItems);
        values.forEach((value, i) => {
          if (value !== null) found.set(keyItems[i]!, value);
        });
      }),
    );
    return found;
  }
}

/** The thread an item `<thread member>/<id>` belongs to (a member holds no '/'). */
export function threadOfItem(item: string): string {
  return decodeThread(item.slice(0, item.indexOf('/')));
}
