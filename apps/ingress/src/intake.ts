import type { GateConfig } from '@tributary/config';
import { queuedArrival } from '@tributary/packing';
import {
  type ControlCommand,
  type Inbound,
  type InboundAdapter,
  type InboundMessage,
  type MessageRef,
  type PlatformClient,
  platformOfThread,
} from '@tributary/platforms';
import { BacklogFullError, type GateState, type ThreadControls, type ThreadQueue } from '@tributary/queue';
import type { Logger } from 'pino';
import type { AcceptedReactions } from './accepted-reactions.js';
import { applyControl, parseControlText } from './control-commands.js';
import { IngressError } from './errors.js';
import { allowListVerdict, meetsConditions, planGate } from './gates/gate-decision.js';
import type { ThreadParents } from './thread-parents.js';

/** What ingress did with one delivery; the HTTP answer and the metrics follow from it. */
export type IntakeOutcome =
  | { outcome: 'accepted'; thread: string; seq: number }
  | { outcome: 'duplicate'; thread: string }
  | { outcome: 'ignored'; reason: string }
  | { outcome: 'control'; command: string; confirmation: string };

export interface IntakeDeps {
  queue: ThreadQueue;
  controls: ThreadControls;
  gates: GateConfig;
  gateState: GateState;
  clients: ReadonlyMap<string, PlatformClient>;
  reactions: AcceptedReactions;
  parents: ThreadParents;
  logger: Logger;
}

/**
 * From a parsed message to a durable queue entry: gates (on the verbatim text), our mention stripped,
 * control commands applied instead of queued, then one enqueue. Acceptance means durably queued.
 */
export class Intake {
  constructor(private readonly deps: IntakeDeps) {}

  async message(
    adapter: InboundAdapter,
    selfId: string | undefined,
    message: InboundMessage,
  ): Promise<IntakeOutcome> {
    const { queue, gates, gateState, parents } = this.deps;
    const { event, thread } = message;
    const mentionsUs = selfId !== undefined && message.mentions.includes(selfId);
    const plan = planGate(gates, {
      senderId: event.sender.id,
      isBot: event.sender.isBot,
      channelId: event.channelId,
      mentionsUs,
      mentionsOthers: message.mentions.some((id) => id !== selfId),
      direct: message.direct,
    });
    if (!plan.admit) return { outcome: 'ignored', reason: plan.reason };

    const text = selfId === undefined ? event.text : adapter.stripSelfMention(event.text, selfId);
    const command = parseControlText(text, selfId);
    // A command acts instead of the enqueue and a parent is fetched ahead of it: both only for a message
    // the gate admits, so these read the gate state first. Every other message has its conditions
    // checked by the enqueue script itself, in the same round trip.
    if (plan.conditions && (command || parents.pending(message))) {
      const verdict = meetsConditions(plan.conditions, await gateState.read(thread));
      if (!verdict.admit) return { outcome: 'ignored', reason: verdict.reason };
    }
    if (command) {
      const confirmation = await this.control(command, thread, message.ref, false, event.replyRef);
      return { outcome: 'control', command, confirmation };
    }

    // Before the enqueue: the turn it may start at once opens a fresh session that wants the parent.
    await parents.record(message);
    let result: Awaited<ReturnType<ThreadQueue['enqueue']>>;
    try {
      result = await queue.enqueue(thread, {
        ...queuedArrival({ ...event, text }),
        idempotencyKey: message.dedupKey,
        ...(plan.conditions ? { gate: plan.conditions } : {}),
      });
    } catch (error) {
      if (error instanceof BacklogFullError) {
        throw new IngressError('backlog_full', `thread is over its backlog cap (${error.message})`, 30);
      }
      throw error;
    }
    if (result.outcome === 'gated') return { outcome: 'ignored', reason: result.refusal };
    if (result.outcome === 'duplicate') return { outcome: 'duplicate', thread };
    this.deps.reactions.add(thread, message.ref);
    return { outcome: 'accepted', thread, seq: result.seq };
  }

  /**
   * A command the platform delivered as such (a Discord slash command): the allow lists apply as to
   * messages, and the answer goes back in the HTTP response.
   */
  async platformCommand(inbound: Extract<Inbound, { kind: 'control' }>): Promise<string> {
    const verdict = allowListVerdict(this.deps.gates, {
      senderId: inbound.senderId,
      channelId: inbound.ref.channelId,
    });
    if (!verdict.admit) return `Not applied: ${verdict.reason.replaceAll('-', ' ')}.`;
    return this.control(inbound.command, inbound.thread, inbound.ref, true);
  }

  /**
   * Applies a command and returns the confirmation; it also goes back as a normal message unless the
   * platform takes it in the HTTP answer (`inline`).
   */
  private async control(
    command: ControlCommand,
    thread: string,
    ref: MessageRef,
    inline: boolean,
    /** The delivery id a gateway confirmation must name. */
    replyRef?: string,
  ): Promise<string> {
    const confirmation = await applyControl(this.deps.controls, command, thread);
    this.deps.logger.info({ thread, command }, 'control command applied');
    if (!inline) this.confirm(thread, ref, confirmation, replyRef);
    return confirmation;
  }

  private confirm(thread: string, ref: MessageRef, text: string, replyRef: string | undefined): void {
    const client = this.deps.clients.get(platformOfThread(thread));
    if (!client) return;
    const target = {
      channelId: ref.channelId,
      ...(ref.threadId === undefined ? {} : { threadId: ref.threadId }),
      replyToMessageId: ref.messageId,
      platform: ref.platform,
      ...(replyRef === undefined ? {} : { replyRef }),
    };
    client.send(target, text).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, platform: ref.platform }, 'control confirmation not delivered');
    });
  }
}
