import type { GateConfig, ThreadRoute } from '@tributary/config';
import type { RefusalReason } from '@tributary/observability';
import { type ArrivalEvent, queuedArrival } from '@tributary/packing';
import {
  type ControlCommand,
  type Inbound,
  type InboundAdapter,
  type InboundMessage,
  isControlCommand,
  isRefusal,
  type MessageRef,
  type PlatformClient,
  platformOfThread,
  type ThreadCommand,
} from '@tributary/platforms';
import {
  type Approval,
  type Approvals,
  type AuditLog,
  BacklogFullError,
  type GateConditions,
  type GateState,
  type RecentThreads,
  type ThreadControls,
  type ThreadIntake,
} from '@tributary/queue';
import type { Logger } from 'pino';
import type { AcceptedReactions } from './accepted-reactions.js';
import type { BotSelf } from './bot-identities.js';
import { applyControl, parseCommandText } from './control-commands.js';
import { IngressError } from './errors.js';
import { allowListVerdict, meetsConditions, planGate } from './gates/gate-decision.js';
import type { PoolWatch } from './pool-watch.js';
import type { SenderNames } from './sender-names.js';
import type { ThreadParents } from './thread-parents.js';
import type { ThreadRouting } from './thread-routing.js';
import { commandHelp, describeThread, type StatusSources } from './thread-status.js';

/** What ingress did with one delivery; the HTTP answer and the metrics follow from it. */
export type IntakeOutcome =
  | { outcome: 'accepted'; thread: string; seq: number }
  | { outcome: 'duplicate'; thread: string }
  /** An edit that replaced the waiting message in place. */
  | { outcome: 'edited'; thread: string }
  /** `dispatched`: the agent already had the message; the delete is recorded and starts no turn. */
  | { outcome: 'deleted'; thread: string; dispatched: boolean }
  /** `refusal`: the rule that refused a message (counted); none for a delete of nothing we hold. */
  | { outcome: 'ignored'; reason: string; refusal?: RefusalReason }
  | { outcome: 'control'; command: string; confirmation: string };

/**
 * What became of a click on a permission request: applied, refused (not the starter or an approver),
 * settled before, too late for its turn, or about a request that is gone; `answer` for the clicker.
 */
export interface ApprovalClick {
  /** `unchecked`: the clicker's groups could not be looked up on the platform just now. */
  result: 'answered' | 'refused' | 'unchecked' | 'settled' | 'late' | 'gone';
  answer: string | undefined;
}

/** How a request was settled, for a click that comes after. */
function settledAlready(request: Approval): string {
  const option = request.options.find((candidate) => candidate.optionId === request.optionId);
  switch (request.state) {
    case 'answered':
      return `Already answered: ${option?.name ?? request.optionId}${request.by ? `, by ${request.by}` : ''}.`;
    case 'timed-out':
      return 'Nobody answered in time; the request was settled without you.';
    default:
      return 'This request has ended; nothing was applied.';
  }
}

/** What became of a control command: applied (with its confirmation), or a retry of one applied before. */
export type ControlOutcome = Extract<IntakeOutcome, { outcome: 'control' | 'duplicate' }>;

/** A message the gate's stateless part admits, with what the thread's gate state must still meet. */
interface Screened {
  outcome: 'admitted';
  text: string;
  /** The command the text is, if it is one. */
  command: ThreadCommand | undefined;
  conditions?: GateConditions;
  /** The thread's route: recorded, or the table's for a new thread (recorded once it is accepted). */
  route: ThreadRoute;
}

export interface IntakeDeps {
  queue: ThreadIntake;
  controls: ThreadControls;
  /** Each person's latest thread per channel, for commands that name none. */
  recent: Pick<RecentThreads, 'note' | 'latest'>;
  /** What `/status` reads; also whether a permission request's turn still runs. */
  status: StatusSources;
  /** Permission requests put to the thread, and who started each thread. */
  approvals: Pick<Approvals, 'get' | 'settle' | 'noteStarter' | 'starter'>;
  /**
   * APPROVERS, who may answer any request: `<platform>:<user id>`, `<platform>:role:<role id>` (roles
   * the click carries), `<platform>:group:<group id>` (groups the platform looks up).
   */
  approvers: ReadonlySet<string>;
  /** Which route each thread takes (docs/adr/0058): its approvers and allowed senders. */
  routing: Pick<ThreadRouting, 'of' | 'recorded' | 'note'>;
  /** The operators' audit log, where each answer to a permission request is kept too. */
  audit: Pick<AuditLog, 'begin' | 'complete'>;
  gates: GateConfig;
  gateState: GateState;
  clients: ReadonlyMap<string, PlatformClient>;
  reactions: AcceptedReactions;
  parents: ThreadParents;
  names: SenderNames;
  /** Tells a thread whose pool has no worker taking turns (docs/adr/0060). */
  pools?: Pick<PoolWatch, 'accepted'>;
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
    self: BotSelf | undefined,
    message: InboundMessage,
  ): Promise<IntakeOutcome> {
    const screened = await this.screen(adapter, self, message);
    if (screened.outcome !== 'admitted') return screened;
    const { event, thread } = message;
    const { command } = screened;
    // A command acts instead of the enqueue and a parent is fetched ahead of it: both only for a message
    // the gate admits, so these read the gate state first. Every other message has its conditions
    // checked by the enqueue script itself, in the same round trip.
    if (screened.conditions && (command || this.deps.parents.pending(message))) {
      const verdict = meetsConditions(screened.conditions, await this.deps.gateState.read(thread));
      // As the enqueue script does: only the loop guard refuses in a conversation that is ours.
      if (!verdict.admit) return this.refused(message, verdict.reason, verdict.reason === 'bot-turn-limit');
    }
    if (command) return this.command(command, thread, message.ref, message.idempotencyKey, false);

    // Before the enqueue: the turn it may start at once opens a fresh session that wants the parent.
    // Both fail open within their own time limit; side by side, they cost one wait, not two.
    const [, sender] = await Promise.all([
      this.deps.parents.record(message),
      this.deps.names.resolve(thread, event.sender, event.workspaceId),
    ]);
    return this.enqueue(message, { ...event, sender, text: screened.text }, screened);
  }

  /**
   * A platform's edit of a message (docs/adr/0019-edits-deletes-and-receipts.md): screened like a
   * message; it replaces the original in place while that still waits, else it is enqueued as an event
   * of its own marked with `edited_at`. An edit is never a control command.
   */
  async edit(
    adapter: InboundAdapter,
    self: BotSelf | undefined,
    message: InboundMessage,
  ): Promise<IntakeOutcome> {
    const screened = await this.screen(adapter, self, message);
    if (screened.outcome !== 'admitted') return screened;
    if (screened.command) return { outcome: 'ignored', reason: 'edited-into-a-command', refusal: 'edit' };
    const { event, thread } = message;
    const sender = await this.deps.names.resolve(thread, event.sender, event.workspaceId);
    const edited = { ...event, sender, text: screened.text };
    const { editedAt: _mark, ...unmarked } = edited;
    const waiting = queuedArrival(unmarked, message.idempotencyKey);
    const revised = await this.deps.queue.revise(thread, {
      action: 'edit',
      messageId: event.eventId,
      idempotencyKey: waiting.idempotencyKey,
      body: waiting.body,
      tokens: waiting.tokens,
    });
    if (revised === 'duplicate') return { outcome: 'duplicate', thread };
    if (revised === 'applied') return { outcome: 'edited', thread };
    return this.enqueue(message, edited, screened, true);
  }

  /** A platform's delete: removes the message while it waits; after dispatch it is only recorded. */
  async delete(inbound: Extract<Inbound, { kind: 'delete' }>): Promise<IntakeOutcome> {
    const { thread, messageId, idempotencyKey } = inbound;
    const revised = await this.deps.queue.revise(thread, {
      action: 'delete',
      messageId,
      idempotencyKey,
    });
    switch (revised) {
      case 'duplicate':
        return { outcome: 'duplicate', thread };
      case 'notFound':
        return { outcome: 'ignored', reason: 'not-a-message-we-hold' };
      default:
        return { outcome: 'deleted', thread, dispatched: revised === 'dispatched' };
    }
  }

  /**
   * The gate's stateless part, on the verbatim text, then our mention stripped; the conditions on the
   * thread's gate state travel with the enqueue (one round trip).
   */
  private async screen(
    adapter: InboundAdapter,
    self: BotSelf | undefined,
    message: InboundMessage,
  ): Promise<Screened | Extract<IntakeOutcome, { outcome: 'ignored' }>> {
    const { event } = message;
    const selfId = self?.id;
    const mentionsUs = selfId !== undefined && message.mentions.includes(selfId);
    const plan = planGate(this.deps.gates, {
      senderId: event.sender.id,
      isBot: event.sender.isBot,
      channelId: event.channelId,
      mentionsUs,
      mentionsOthers: message.mentions.some((id) => id !== selfId),
      direct: message.direct,
    });
    if (!plan.admit) return this.refused(message, plan.reason, mentionsUs || message.direct);
    const route = await this.deps.routing.of(message.thread, {
      platform: event.platform,
      workspaceId: event.workspaceId,
      channelId: event.channelId,
    });
    const { allowedUsers } = route.profile;
    if (allowedUsers !== undefined && !allowedUsers.includes(event.sender.id)) {
      return this.refused(message, 'user-not-allowed-on-route', mentionsUs || message.direct);
    }
    const text = self === undefined ? event.text : adapter.stripSelfMention(event.text, self.id, self.name);
    return {
      outcome: 'admitted',
      text,
      command: parseCommandText(text, selfId),
      ...(plan.conditions ? { conditions: plan.conditions } : {}),
      route,
    };
  }

  /**
   * A refusal of a message meant for us (it mentions us, or the conversation is ours) is kept as its
   * receipt; other channel traffic, people's and bots' alike, leaves nothing.
   */
  private async refused(
    message: InboundMessage,
    reason: string,
    meantForUs: boolean,
  ): Promise<Extract<IntakeOutcome, { outcome: 'ignored' }>> {
    if (meantForUs) await this.deps.queue.noteRefusal(message.thread, message.event.eventId, reason);
    return { outcome: 'ignored', reason, refusal: 'gate' };
  }

  /**
   * One enqueue of the event as the agent will see it (sender name resolved); `edit`: an edit of a
   * dispatched message.
   */
  private async enqueue(
    message: InboundMessage,
    event: ArrivalEvent,
    screened: Screened,
    edit = false,
  ): Promise<IntakeOutcome> {
    const { queue } = this.deps;
    const { thread } = message;
    // Before the enqueue, never after: the worker that takes the message reads the route it runs by.
    await this.deps.routing.note(thread, screened.route);
    let result: Awaited<ReturnType<ThreadIntake['enqueue']>>;
    try {
      result = await queue.enqueue(thread, {
        ...queuedArrival(event, message.idempotencyKey),
        edit,
        ...(screened.conditions ? { gate: screened.conditions } : {}),
      });
    } catch (error) {
      // The script kept the refusal as the message's receipt.
      if (error instanceof BacklogFullError) {
        throw new IngressError('backlog_full', `thread is over its backlog cap (${error.message})`, 30);
      }
      throw error;
    }
    // Refused by the thread's state; a refusal in a conversation that is ours is already its receipt.
    if (result.outcome === 'gated') return { outcome: 'ignored', reason: result.refusal, refusal: 'gate' };
    if (result.outcome === 'duplicate') return { outcome: 'duplicate', thread };
    if (result.ringError !== undefined) {
      this.deps.logger.warn(
        { err: result.ringError, thread },
        'message accepted, but no worker was woken for it; the sweeper wakes one within seconds (tributary_sweeper_revivals_total{reason="doorbell"})',
      );
    }
    this.deps.reactions.add(thread, message.ref);
    void this.deps.pools?.accepted(thread, screened.route.profile.pool, message.ref);
    await this.noteRecent(message);
    return { outcome: 'accepted', thread, seq: result.seq };
  }

  /**
   * Who last wrote in which thread of a channel, for the commands that name no thread, and who started
   * it. The message is accepted already: a failure here costs only that, and is said at warn.
   */
  private async noteRecent(message: InboundMessage): Promise<void> {
    const { ref, event, thread } = message;
    try {
      await Promise.all([
        this.deps.recent.note(`${ref.platform}:${ref.channelId}`, event.sender.id, thread),
        this.deps.approvals.noteStarter(thread, event.sender.id),
      ]);
    } catch (error) {
      this.deps.logger.warn(
        { err: error, thread },
        "message accepted, but not noted as its sender's latest thread; a slash command may not find it",
      );
    }
  }

  /**
   * A command the platform delivered as such (a Discord slash command): the allow lists apply as to
   * messages, and the answer goes back in the HTTP response (a refusal's too).
   */
  async platformCommand(inbound: Extract<Inbound, { kind: 'control' }>): Promise<ControlOutcome> {
    const { command, ref } = inbound;
    const verdict = allowListVerdict(this.deps.gates, {
      senderId: inbound.senderId,
      channelId: inbound.ref.channelId,
    });
    if (!verdict.admit) {
      return {
        outcome: 'control',
        command,
        confirmation: `Not applied: ${verdict.reason.replaceAll('-', ' ')}.`,
      };
    }
    const thread =
      inbound.thread ?? (await this.deps.recent.latest(`${ref.platform}:${ref.channelId}`, inbound.senderId));
    const allowedUsers = thread && (await this.deps.routing.recorded(thread))?.profile.allowedUsers;
    if (allowedUsers && !allowedUsers.includes(inbound.senderId)) {
      return { outcome: 'control', command, confirmation: 'Not applied: user not allowed on route.' };
    }
    if (thread === undefined && command !== 'help') {
      return {
        outcome: 'control',
        command,
        confirmation:
          'You have no conversation with me in this channel yet: mention me in a message to start one.',
      };
    }
    return this.command(command, thread ?? '', ref, inbound.idempotencyKey, true);
  }

  /**
   * A click on a button of a permission request (docs/adr/0056): applied once, by the thread's starter
   * or an approver, while the request's turn still runs. Anyone else, a second click and a click after
   * the turn are told why, privately where the platform allows, and nothing changes.
   */
  async approval(click: Extract<Inbound, { kind: 'approval' }>): Promise<ApprovalClick> {
    const { approvals } = this.deps;
    const request = await approvals.get(click.approvalId);
    const option = request?.options[click.option];
    if (request === undefined || option === undefined) {
      return this.clickAnswer(click, 'gone', 'This request has ended; nothing was applied.');
    }
    const allowed = await this.mayAnswer(click, request.thread, await approvals.starter(request.thread));
    if (allowed === 'unchecked') {
      return this.clickAnswer(
        click,
        'unchecked',
        'Your approver groups could not be checked just now; nothing was applied. Try again in a moment.',
      );
    }
    if (!allowed) {
      return this.clickAnswer(
        click,
        'refused',
        'Only the person who started this conversation or an approver can answer this request.',
      );
    }
    if (request.state !== 'pending') return this.clickAnswer(click, 'settled', settledAlready(request));
    const state = await this.deps.status.state(request.thread);
    if (state.status !== 'running' || state.fence !== request.fence) {
      await approvals.settle(request.id, 'ended');
      await this.settleShown(request, click.ref, `⏹ This request ended with its turn: ${request.title}`);
      return this.clickAnswer(click, 'late', 'This request ended with its turn; nothing was applied.');
    }
    const settled = await approvals.settle(request.id, 'answered', option.optionId, click.userId);
    if (!settled.settled) return this.clickAnswer(click, 'settled', settledAlready(request));
    const answered = {
      thread: request.thread,
      approval: request.id,
      toolCallId: request.toolCallId,
      toolKind: request.toolKind,
      title: request.title,
      option: option.kind,
      waitedMs: Date.now() - request.askedAt,
    };
    this.deps.logger.info({ ...answered, by: click.userId }, 'permission request answered in the thread');
    await this.audited(`${click.ref.platform}:${click.userId}`, answered);
    const who = click.userName ?? click.userId;
    await this.settleShown(
      request,
      click.ref,
      `${isRefusal(option.kind) ? '🚫' : '✅'} **${option.name}**, by ${who}: ${request.title}`,
    );
    return { result: 'answered', answer: undefined };
  }

  /**
   * The thread's starter, an approver (APPROVERS, and the thread's route's) by id, by a role the click
   * carries, or by a group the platform keeps (`<platform>:group:<id>`, looked up only when the rest did not answer). A lookup that fails
   * is `unchecked`: said at warn and to the clicker, never taken as a yes.
   */
  private async mayAnswer(
    click: Extract<Inbound, { kind: 'approval' }>,
    thread: string,
    starter: string | undefined,
  ): Promise<boolean | 'unchecked'> {
    const platform = click.ref.platform;
    const routeApprovers = (await this.deps.routing.recorded(thread))?.profile.approvers ?? [];
    const approvers = new Set([...this.deps.approvers, ...routeApprovers]);
    if (
      click.userId === starter ||
      approvers.has(`${platform}:${click.userId}`) ||
      (click.userRoles ?? []).some((role) => approvers.has(`${platform}:role:${role}`))
    ) {
      return true;
    }
    const prefix = `${platform}:group:`;
    const groups = [...approvers]
      .filter((entry) => entry.startsWith(prefix))
      .map((entry) => entry.slice(prefix.length));
    const client = this.deps.clients.get(platform);
    if (groups.length === 0 || client?.memberOf === undefined) return false;
    try {
      return (await client.memberOf(click.ref, click.userId, groups)).length > 0;
    } catch (error) {
      this.deps.logger.warn(
        { err: error, platform, user: click.userId },
        "approver groups not looked up; the click was refused for now (check the bot's scopes)",
      );
      return 'unchecked';
    }
  }

  /**
   * An answer in the operators' audit log beside their own actions: who (`<platform>:<user>`), what,
   * when. It is applied already, so a failure to write it is said at warn, not undone.
   */
  private async audited(actor: string, answered: Record<string, unknown>): Promise<void> {
    try {
      const id = await this.deps.audit.begin({
        actor,
        address: null,
        action: 'approvals.answer',
        target: answered,
      });
      await this.deps.audit.complete(id, { outcome: 'ok', result: { option: answered.option } });
    } catch (error) {
      this.deps.logger.warn(
        { err: error, thread: answered.thread },
        'permission answer not written to the audit log',
      );
    }
  }

  /** Replaces the request's buttons with how it was settled; best effort, the answer stands anyway. */
  private async settleShown(request: Approval, ref: MessageRef, text: string): Promise<void> {
    const client = this.deps.clients.get(platformOfThread(request.thread));
    if (request.messageId === undefined || client?.settleApproval === undefined) return;
    await client.settleApproval(ref, request.messageId, text).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, thread: request.thread }, 'permission request message not updated');
    });
  }

  /** What the clicker is told; whispered through the platform where the HTTP answer cannot say it. */
  private clickAnswer(
    click: Extract<Inbound, { kind: 'approval' }>,
    result: ApprovalClick['result'],
    answer: string,
  ): ApprovalClick {
    const client = this.deps.clients.get(click.ref.platform);
    if (!click.privately && client?.whisper) {
      client.whisper(click.ref, click.userId, answer).catch((error: unknown) => {
        this.deps.logger.warn(
          { err: error, platform: click.ref.platform },
          'private answer to a click not delivered',
        );
      });
    }
    return { result, answer };
  }

  /** A control is applied once per delivery; `status` and `help` are answered each time they are asked. */
  private async command(
    command: ThreadCommand,
    thread: string,
    ref: MessageRef,
    delivery: string,
    inline: boolean,
  ): Promise<ControlOutcome> {
    if (isControlCommand(command)) return this.control(command, thread, ref, delivery, inline);
    const answer =
      command === 'help' ? commandHelp(ref.platform) : await describeThread(this.deps.status, thread);
    if (!inline) this.confirm(thread, ref, answer);
    return { outcome: 'control', command, confirmation: answer };
  }

  /**
   * Applies a command once per `delivery` (its idempotency key); the confirmation also goes back as a
   * normal message unless the platform takes it in the HTTP answer (`inline`). A retry of a delivery
   * applied before is a duplicate, with no effect and no confirmation.
   */
  private async control(
    command: ControlCommand,
    thread: string,
    ref: MessageRef,
    delivery: string,
    inline: boolean,
  ): Promise<ControlOutcome> {
    const applied = await applyControl(this.deps.controls, command, thread, delivery);
    if (applied === 'duplicate') return { outcome: 'duplicate', thread };
    this.deps.logger.info({ thread, command }, 'control command applied');
    if (!inline) this.confirm(thread, ref, applied.confirmation);
    return { outcome: 'control', command, confirmation: applied.confirmation };
  }

  private confirm(thread: string, ref: MessageRef, text: string): void {
    const client = this.deps.clients.get(platformOfThread(thread));
    if (!client) return;
    client.send(ref, text).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, platform: ref.platform }, 'control confirmation not delivered');
    });
  }
}
