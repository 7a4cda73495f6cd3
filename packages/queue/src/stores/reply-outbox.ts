import type { RedisClient } from '../connections.js';
import * as script from '../lua/outbox-calls.js';
import { Scripts } from '../lua/scripts.js';
import type { DeadBounds } from '../queue-config.js';
import { type PendingReply, type TakenReply, takenReply } from '../taken-reply.js';
import { DeadSets } from './dead-sets.js';
import type { KeysOf } from './keys-of.js';

export type { PendingReply, TakenReply };

/** A reply given up after the retry horizon; an operator can re-drive or discard it. */
export interface DeadReply extends PendingReply {
  /** The error of its last attempt. */
  reason: string;
  /** The reason without its variable parts: the admin API groups dead replies by it. */
  reasonClass?: string;
  deadAt: number;
}

/** What a deliverer finds at a thread's outbox. */
export type Take = ({ kind: 'reply' } & TakenReply) | { kind: 'busy' } | { kind: 'empty' };

/** The last part an attempt posted, recorded with the reply's done. */
export interface PostedPart {
  part: number;
  messageId: string;
}

/** After a done: the reply `next` in line when the done took it (its parts not read yet). */
export type Done = { kind: 'lost' } | { kind: 'more'; next?: PendingReply } | { kind: 'empty' };

const PARTS_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The threads' reply outboxes. Replies enter with their batch's commit (commit and fail scripts);
 * deliverers take a thread's oldest reply under a per-thread lock, and report it done, to retry
 * later, or dead after the horizon. The platform message id of every part posted is kept, so a
 * retried reply edits its parts instead of posting them again.
 */
export class ReplyOutbox {
  private readonly scripts: Scripts;

  private readonly deadSets: DeadSets;

  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    /** How long dead replies are kept and how many (queue-config.ts's deadBounds). */
    private readonly deadBounds: DeadBounds,
  ) {
    this.scripts = new Scripts(redis, script.OUTBOX_SCRIPTS);
    this.deadSets = new DeadSets(redis, keysOf);
  }

  /**
   * Locks the thread's outbox for `owner` for `lockMs` (or extends the lock) and returns its head with
   * the parts of it posted so far: two calls, for the parts' key is the head's, which only the take
   * tells (every key a script touches is declared before it runs).
   */
  async take(thread: string, owner: string, lockMs: number): Promise<Take> {
    const k = this.keysOf(thread);
    const reply = await this.scripts.run(script.replyTake, k, { member: k.member, owner, lockMs });
    if (reply.status !== 'reply') return { kind: reply.status };
    const { reply: head } = takenReply(reply.json, []);
    return { kind: 'reply', reply: head, posted: await this.postedParts(thread, head.id) };
  }

  /**
   * The reply reached the platform: it leaves the outbox with the record of its posted parts (`last`,
   * the part the attempt posted last, is recorded with it, for a deliverer that lost the lock). With
   * `lockMs` > 0 the lock is kept for the next reply, handed back as `next`; otherwise it is released.
   */
  async done(
    thread: string,
    owner: string,
    id: string,
    { last, lockMs = 0 }: { last?: PostedPart; lockMs?: number } = {},
  ): Promise<Done> {
    const k = this.keysOf(thread);
    const keys = { ...k, postedParts: k.postedParts(id) };
    const args = {
      member: k.member,
      owner,
      id,
      part: last?.part ?? '',
      messageId: last?.messageId ?? '',
      retentionMs: PARTS_RETENTION_MS,
      lockMs,
    };
    const done = await this.scripts.run(script.replyDone, keys, args);
    if (done.kind !== 'more' || done.next === undefined) return { kind: done.kind };
    return { kind: 'more', next: takenReply(done.next, []).reply };
  }

  /** Try again after `delayMs`; the lock is released. */
  async retry(thread: string, owner: string, id: string, delayMs: number, error: string): Promise<boolean> {
    const k = this.keysOf(thread);
    const args = { member: k.member, owner, id, delayMs, error };
    return (await this.scripts.run(script.replyRetry, k, args)) === 'ok';
  }

  /**
   * Moves the reply to the thread's dead replies, counting the attempt that failed last; its `error` is
   * the dead reply's reason. The lock is released.
   */
  async bury(thread: string, owner: string, id: string, error: string): Promise<boolean> {
    const k = this.keysOf(thread);
    const args = { member: k.member, owner, id, error, ...this.deadBounds };
    return (await this.scripts.run(script.replyBury, k, args)) === 'ok';
  }

  /** Puts a dead reply back in the outbox; false when there is no such dead reply. */
  redrive(thread: string, id: string): Promise<boolean> {
    const k = this.keysOf(thread);
    return this.scripts.run(script.replyRedrive, k, { member: k.member, id });
  }

  /** Drops a dead reply for good; false when there is no such dead reply. */
  discard(thread: string, id: string): Promise<boolean> {
    const k = this.keysOf(thread);
    return this.scripts.run(script.replyDiscard, k, { member: k.member, id });
  }

  async pending(thread: string): Promise<PendingReply[]> {
    return this.list(this.keysOf(thread).replies);
  }

  /** The thread's dead replies, oldest first. */
  async dead(thread: string): Promise<DeadReply[]> {
    return (await this.deadSets.ofThread(thread, 'replies')).map(
      ({ thread: _thread, ...reply }) => reply as unknown as DeadReply,
    );
  }

  /** Part number → platform message id, of the parts of reply `id` posted so far. */
  async postedParts(thread: string, id: string): Promise<Map<number, string>> {
    const fields = await this.redis.hgetall(this.keysOf(thread).postedParts(id));
    return new Map(Object.entries(fields).map(([part, messageId]) => [Number(part), messageId]));
  }

  async recordPart(thread: string, id: string, part: number, messageId: string): Promise<void> {
    const postedParts = this.keysOf(thread).postedParts(id);
    await this.scripts.run(
      script.replyPart,
      { postedParts },
      { part, messageId, retentionMs: PARTS_RETENTION_MS },
    );
  }

  private async list<T>(key: string): Promise<T[]> {
    return (await this.redis.lrange(key, 0, -1)).map((json) => JSON.parse(json) as T);
  }
}
