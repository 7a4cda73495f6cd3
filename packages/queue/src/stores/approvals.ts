import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../connections.js';
import { approvalDecide, type Settled } from '../lua/approval-calls.js';
import { Scripts } from '../lua/scripts.js';

/** One option of a permission request, as the agent offered it. */
export interface ApprovalOption {
  optionId: string;
  name: string;
  kind: string;
}

/** A permission request put to the people of a thread, with the turn it belongs to. */
export interface ApprovalRequest {
  thread: string;
  batchId: string;
  /** The fence of the lease the turn ran under: an answer for another fence comes after its turn. */
  fence: number;
  toolCallId: string;
  toolKind: string;
  /** What the agent asks to do, scrubbed of the worker's secrets. */
  title: string;
  options: ApprovalOption[];
}

export type ApprovalState = 'pending' | 'answered' | 'timed-out' | 'cancelled' | 'ended';

export interface Approval extends ApprovalRequest {
  id: string;
  state: ApprovalState;
  askedAt: number;
  /** The message that shows it, once posted. */
  messageId?: string;
  /** Once settled: the option chosen (answered, or the fallback of a time-out) and by whom. */
  optionId?: string;
  by?: string;
  settledAt?: number;
}

/**
 * Permission requests waiting for the people of a thread, each a hash that outlives its turn by
 * `ttlMs` (so a late click is told its request ended, not that it never was), settled once
 * (approval-decide-1.lua). Also each thread's starter, who may answer its requests.
 */
export class Approvals {
  private readonly scripts: Scripts;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {
    this.scripts = new Scripts(redis, [approvalDecide]);
  }

  /** Records a pending request; returns its id, short enough for Telegram's 64-byte callback data. */
  async open(request: ApprovalRequest): Promise<string> {
    const id = randomBytes(8).toString('base64url');
    const key = this.key(id);
    await this.redis
      .multi()
      .hset(key, {
        ...request,
        options: JSON.stringify(request.options),
        state: 'pending',
        askedAt: Date.now(),
      })
      .pexpire(key, this.ttlMs)
      .exec();
    return id;
  }

  async shownIn(id: string, messageId: string): Promise<void> {
    await this.redis.hset(this.key(id), 'messageId', messageId);
  }

  async get(id: string): Promise<Approval | undefined> {
    const fields = await this.redis.hgetall(this.key(id));
    if (fields.state === undefined) return undefined;
    return {
      id,
      thread: fields.thread ?? '',
      batchId: fields.batchId ?? '',
      fence: Number(fields.fence ?? 0),
      toolCallId: fields.toolCallId ?? '',
      toolKind: fields.toolKind ?? 'other',
      title: fields.title ?? '',
      options: JSON.parse(fields.options ?? '[]') as ApprovalOption[],
      state: fields.state as ApprovalState,
      askedAt: Number(fields.askedAt ?? 0),
      ...(fields.messageId ? { messageId: fields.messageId } : {}),
      ...(fields.optionId ? { optionId: fields.optionId } : {}),
      ...(fields.by ? { by: fields.by } : {}),
      ...(fields.settledAt ? { settledAt: Number(fields.settledAt) } : {}),
    };
  }

  /** Settles a pending request once; anything else finds it settled (or gone) and is told how. */
  settle(id: string, state: Exclude<ApprovalState, 'pending'>, optionId = '', by = ''): Promise<Settled> {
    return this.scripts.run(approvalDecide, { approval: this.key(id) }, { state, optionId, by });
  }

  /** The first person to write in `thread` (kept while the thread lives); set once. */
  async noteStarter(thread: string, person: string): Promise<void> {
    await this.redis.set(this.starterKey(thread), person, 'PX', this.ttlMs, 'NX');
  }

  async starter(thread: string): Promise<string | undefined> {
    return (await this.redis.get(this.starterKey(thread))) ?? undefined;
  }

  private key(id: string): string {
    return `${this.prefix}:approval:{${id}}`;
  }

  private starterKey(thread: string): string {
    return `${this.prefix}:starter:{${thread}}`;
  }
}
