import type { Origin } from '../batch.js';
import { BacklogFullError } from '../errors.js';
import * as script from '../lua/queue-calls.js';
import { dedupWindowMs, receiptBounds } from '../queue-config.js';
import { controlChannelName } from '../stores/control-channel.js';
import { dedupMember } from '../thread-keys.js';
import type { RingOptions } from '../wake/doorbell.js';
import type { ThreadScripts } from './thread-scripts.js';

export interface NewMessage {
  /** The caller's id for the message (kept in batch records). */
  id: string;
  /** Retries with the same key within `dedupTtlMs` are absorbed. Defaults to `id`. */
  idempotencyKey?: string;
  body: string;
  origin?: Origin;
  /** Token cost for `maxBatchTokens`, when the caller already knows it; else `config.countTokens(body)`. */
  tokens?: number;
  /** The sender, for `per-lane` processing: a batch ends where the lane changes. */
  lane?: string;
  /** An edit of message `id` that came after it was dispatched: its receipt points here too. */
  edit?: boolean;
  /** Conditions on the thread's gate state, checked atomically with the acceptance. */
  gate?: GateConditions;
}

/** The part of an ingress gate's verdict that depends on the thread's gate state. */
export interface GateConditions {
  /** Refuse unless a message of the thread was accepted before. */
  requireInvolved: boolean;
  /** Refuse once this many agent messages were accepted in a row. */
  maxBotTurns?: number;
}

/** An edit or delete of an accepted message, by the platform message id it was enqueued with. */
export type Revision =
  | { action: 'edit'; messageId: string; idempotencyKey: string; body: string; tokens?: number }
  | { action: 'delete'; messageId: string; idempotencyKey: string };

/**
 * `applied`: the buffered entry was replaced or removed in place; `dispatched`: a worker has it, or an
 * edit has too much waiting behind it to be rewritten in place (`editRewriteMax`): the edit must then
 * travel as an event of its own, and a delete is recorded; `notFound`: no accepted message by that id
 * is known (or it was dropped); `duplicate`: this edit or delete was seen before.
 */
export type RevisionResult = 'applied' | 'dispatched' | 'notFound' | 'duplicate';

export type EnqueueResult =
  | {
      outcome: 'accepted';
      streamId: string;
      seq: number;
      /** This message made the thread runnable and its doorbell was rung. */
      rang: boolean;
      /**
       * It made the thread runnable but ringing failed: the message is durable, and the sweeper rings
       * the thread once it has waited `lostDoorbellAfterMs`; the caller says so at warn.
       */
      ringError?: unknown;
    }
  | { outcome: 'duplicate'; streamId: string }
  | { outcome: 'gated'; refusal: script.GateCondition };

/**
 * Ingress's side of the thread state machine: a message, an edit or delete of one, a refusal noted for
 * its receipt. Each is acknowledged only once it is durable (and replicated, as `ackReplicas` asks).
 */
export class ThreadIntake {
  constructor(private readonly threads: ThreadScripts) {}

  async enqueue(thread: string, message: NewMessage): Promise<EnqueueResult> {
    const { threads } = this;
    const k = threads.keys(thread);
    const c = threads.config;
    const reply = await threads.scripts.run(script.enqueue, k, {
      member: k.member,
      dedupMember: dedupMember(thread, message.idempotencyKey ?? message.id),
      messageId: message.id,
      tokens: message.tokens ?? c.countTokens(message.body),
      origin: message.origin ?? 'user',
      body: message.body,
      lane: message.lane ?? '',
      maxBacklog: c.maxBacklog,
      dedupTtlMs: dedupWindowMs(c),
      requireInvolved: message.gate?.requireInvolved ? 1 : 0,
      maxBotTurns: message.gate?.maxBotTurns ?? '',
      edit: message.edit ? 1 : 0,
      ...receiptBounds(c),
      thread,
      idleTtlMs: c.idleTtlMs,
      controlChannel: controlChannelName(c.prefix),
    });
    switch (reply.status) {
      case 'duplicate':
        // Confirmed too: its first delivery may have been refused for want of this confirmation.
        await threads.replicated(k);
        return { outcome: 'duplicate', streamId: reply.streamId };
      case 'gated':
        return { outcome: 'gated', refusal: reply.refusal };
      case 'backlogFull':
        throw new BacklogFullError(thread, reply.backlog);
      case 'queued':
        await threads.replicated(k);
        return { outcome: 'accepted', streamId: reply.streamId, seq: reply.seq, rang: false };
    }
    // The message is durable already; a doorbell lost here (or popped from its owner's line by a
    // worker that died before its claim) is re-rung by the sweeper.
    const ringError = await threads.ring(k, reply.epoch, this.ringAfterEnqueue(reply.lastOwner)).then(
      () => undefined,
      (error: unknown) => error ?? new Error('ring failed'),
    );
    // Rung first: a refused acknowledgement (the platform retries) must not leave the thread waiting.
    await threads.replicated(k);
    const { streamId, seq } = reply;
    if (ringError === undefined) return { outcome: 'accepted', streamId, seq, rang: true };
    return { outcome: 'accepted', streamId, seq, rang: false, ringError };
  }

  /** Applies an edit or delete to the message while it is buffered (see RevisionResult). */
  async revise(thread: string, revision: Revision): Promise<RevisionResult> {
    const { threads } = this;
    const k = threads.keys(thread);
    const c = threads.config;
    const body = revision.action === 'edit' ? revision.body : '';
    const reply = await threads.scripts.run(script.revise, k, {
      member: k.member,
      dedupMember: dedupMember(thread, revision.idempotencyKey),
      messageId: revision.messageId,
      action: revision.action,
      body,
      tokens: revision.action === 'edit' ? (revision.tokens ?? c.countTokens(body)) : 0,
      dedupTtlMs: dedupWindowMs(c),
      rewriteMax: c.editRewriteMax,
      rewriteMaxBytes: c.editRewriteMaxBytes,
      ...receiptBounds(c),
    });
    // An edit or delete that changed (or recorded) something is acknowledged as a message is: once
    // replicated, so a failover cannot bring the old text back to the agent.
    if (reply.status !== 'notFound') await threads.replicated(k);
    return reply.status;
  }

  /** Records that ingress refused a message addressed to us, for its receipt. */
  async noteRefusal(thread: string, messageId: string, reason: string): Promise<void> {
    const k = this.threads.keys(thread);
    await this.threads.scripts.run(script.noteRefusal, k, {
      member: k.member,
      messageId,
      reason,
      ...receiptBounds(this.threads.config),
    });
  }

  /**
   * A thread that ran before goes to the line of the worker that ran it, where its session is, while
   * that worker takes doorbells (docs/adr/0051); a new thread to the shared queue.
   */
  private ringAfterEnqueue(lastOwner: string): RingOptions {
    return this.threads.config.affinity && lastOwner !== '' ? { prefer: { owner: lastOwner } } : {};
  }
}
