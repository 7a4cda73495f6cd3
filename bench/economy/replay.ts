import { arrivalFromBody, countTokens, eventTokens } from '@tributary/packing';
import { signedRequestHeaders } from '@tributary/platforms';
import type { BatchRecord } from '@tributary/queue';
import { waitFor } from '@tributary/testkit';
import { STACK_SECRETS, type Stack } from '../../test/stack/stack-fixture.js';
import type { Clock } from './policies.js';
import type { Strategy } from './strategies.js';
import type { ScriptedMessage, Workload } from './workloads.js';

/** One committed agent turn of a replay, in workload time. */
export interface Turn {
  /** Indexes of the workload messages the turn's prompt carried. */
  messages: number[];
  promptTokens: number;
  replyTokens: number;
  /** When its answer reached the platform. */
  answeredAt: number;
}

export interface ReplayResult {
  workload: Workload;
  strategy: Strategy;
  /** When each workload message was sent. */
  sentAt: number[];
  turns: Turn[];
}

/** The same clock the fake platform API stamps its calls with. */
const wallClock = () => performance.timeOrigin + performance.now();

// A 1×1 PNG: the screenshot's bytes do not matter, its block does (a fixed token estimate per image).
const SCREENSHOT =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** The `@agent` line that makes the built-in agent take the workload's turn time (bench scaffolding). */
const SCRIPT_LINE = /^@agent .*$/gm;

/** Tokens of a stored message as the agent reads it, without the line that scripted the turn time. */
function messageTokens(body: string): number {
  const event = arrivalFromBody(body);
  return eventTokens({ ...event, text: event.text.replace(SCRIPT_LINE, '').trim() });
}

/**
 * Replays one workload under one strategy in its own thread of `stack`: real webhooks into ingress, a
 * real worker, the built-in agent taking `turnMs / scale` of real time per turn. Workload time runs
 * `scale` times faster than real time.
 */
export class Replay {
  readonly thread: string;
  private readonly threadKey: string;
  /** Event id of each prompt posted → the workload messages it carries. */
  private readonly posted = new Map<string, number[]>();
  private readonly sentAt: number[] = [];
  private start = 0;
  private prompts = 0;

  constructor(
    private readonly stack: Stack,
    readonly workload: Workload,
    readonly strategy: Strategy,
    private readonly scale: number,
  ) {
    this.thread = `${workload.name}.${strategy.name}`;
    this.threadKey = `gateway:bench:economy:${this.thread}`;
  }

  /** Opens the thread's agent session, so the replay measures turns and not an agent's start-up. */
  async warmUp(): Promise<void> {
    const eventId = `${this.thread}.warm-up`;
    const answered = this.answer(eventId);
    await this.post(eventId, [{ at: 0, from: { id: 'U0', name: 'warm-up', isBot: false }, text: 'hello' }]);
    await answered;
  }

  async run(): Promise<ReplayResult> {
    const clock: Clock = {
      now: () => (wallClock() - this.start) * this.scale,
      after: (ms, task) => {
        const timer = setTimeout(task, ms / this.scale);
        return { cancel: () => clearTimeout(timer) };
      },
    };
    const policy = this.strategy.policy<number>(clock, (indexes) => this.submit(indexes));
    this.start = wallClock();
    const { messages } = this.workload;
    await Promise.all(
      messages.map(
        (message, index) =>
          new Promise<void>((resolve) =>
            clock.after(message.at, () => {
              this.sentAt[index] = clock.now();
              policy.receive(index);
              resolve();
            }),
          ),
      ),
    );
    // The workload's own time plus a minute: on a loaded two-core machine the last answers of a smoke
    // run (whose turns the scale compresses to milliseconds) came more than 30 s late.
    const limitMs = (this.workload.turnMs * messages.length) / this.scale + 60_000;
    await waitFor(() => policy.settled(), {
      what: `${this.thread}: the policy to settle`,
      timeoutMs: limitMs,
    });
    const turns = await waitFor(() => this.turnsOnceAnswered(), {
      what: `${this.thread}: every posted prompt answered`,
      timeoutMs: limitMs,
      intervalMs: 50,
    }).catch(async (error: unknown) => {
      // Redis gone too must not hide the timeout behind its own error.
      const where = await this.unanswered().catch((cause: unknown) => `where unknown: ${String(cause)}`);
      throw new Error(`${error instanceof Error ? error.message : String(error)}; ${where}`);
    });
    return { workload: this.workload, strategy: this.strategy, sentAt: this.sentAt, turns };
  }

  private async submit(indexes: number[]): Promise<void> {
    const eventId = `${this.thread}.p${++this.prompts}`;
    this.posted.set(eventId, indexes);
    const answered = this.strategy.waitsForAnswer ? this.answer(eventId) : undefined;
    try {
      await this.post(
        eventId,
        indexes.map((i) => this.workload.messages[i]!),
      );
    } catch (error) {
      // The wait for its answer ends when the stack closes; it must not hide this error behind its own.
      answered?.catch(() => {});
      throw error;
    }
    await answered;
  }

  /** Resolves when a reply naming `eventId` reached the platform. */
  private async answer(eventId: string): Promise<void> {
    await this.stack.api.waitForCalls((call) => call.method === 'reply' && replyTo(call.body) === eventId, {
      timeoutMs: 600_000,
    });
  }

  /** One webhook: a single message as sent, or several joined into one (as a debouncing bot does). */
  private async post(eventId: string, messages: ScriptedMessage[]): Promise<void> {
    const from = messages[0]!.from;
    const delayMs = Math.round(this.workload.turnMs / this.scale);
    const text = messages.map((m) => `${m.text}\n@agent {"delayMs": ${delayMs}}`.trim()).join('\n\n');
    const attachments = messages
      .filter((m) => m.screenshot)
      .map(() => ({
        type: 'image',
        filename: 'screenshot.png',
        mime_type: 'image/png',
        data: SCREENSHOT,
        size: 70,
      }));
    const body = JSON.stringify({
      schema: 'openab.gateway.event.v1',
      event_id: eventId,
      timestamp: new Date().toISOString(),
      platform: 'bench',
      event_type: 'message',
      channel: { id: 'economy', type: 'group', thread_id: this.thread },
      sender: { id: from.id, name: from.name, display_name: from.name, is_bot: from.isBot },
      content: { type: 'text', text, attachments },
      mentions: [],
      message_id: eventId,
    });
    const send = () =>
      this.stack.post('/webhooks/gateway', body, signedRequestHeaders(STACK_SECRETS.GATEWAY_SECRET, body));
    // As a platform does, a 503 (Redis slow to answer on a loaded machine) is sent again; a retry may
    // find the first delivery stored already.
    let answer = await send();
    let retried = false;
    for (let attempt = 1; answer.status === 503 && attempt < 10; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await send();
      retried = true;
    }
    const outcome = answer.body.outcome;
    if (outcome !== 'accepted' && !(retried && outcome === 'duplicate')) {
      throw new Error(`${eventId} was not accepted: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  }

  /** The replay's turns, once every prompt posted is in a committed turn whose answer was delivered. */
  private async turnsOnceAnswered(): Promise<Turn[] | undefined> {
    const records = (await this.stack.worker.queue.admin.history(this.threadKey))
      .filter((r) => r.status === 'complete')
      .sort((a, b) => a.claimedAt - b.claimedAt);
    const replies = this.stack.calls('gateway', 'reply');
    const turns: Turn[] = [];
    let carried = 0;
    for (const record of records) {
      const eventIds = record.messages.map((m) => arrivalFromBody(m.body).replyRef);
      if (!eventIds.some((id) => id !== undefined && this.posted.has(id))) continue;
      const answers = replies.filter((c) => eventIds.includes(replyTo(c.body)));
      if (answers.length === 0) return undefined;
      carried += eventIds.length;
      turns.push({
        messages: eventIds.flatMap((id) => this.posted.get(id!) ?? []),
        promptTokens: record.messages.reduce((sum, m) => sum + messageTokens(m.body), 0),
        replyTokens: countTokens(record.reply ?? ''),
        answeredAt: (Math.min(...answers.map((c) => c.at)) - this.start) * this.scale,
      });
    }
    return carried === this.posted.size ? turns : undefined;
  }

  /**
   * Each prompt not yet in an answered, complete batch record, with every record that carries it (id,
   * status, why it failed, whether a reply named one of its events), those carried twice, the
   * thread's state and the stack's last warnings on it: what a stuck replay says.
   */
  private async unanswered(): Promise<string> {
    const { queue } = this.stack.worker;
    const records = await queue.admin.history(this.threadKey);
    const replied = new Set(this.stack.calls('gateway', 'reply').map((c) => replyTo(c.body)));
    const events = (r: BatchRecord) => r.messages.map((m) => arrivalFromBody(m.body).replyRef);
    const answered = (r: BatchRecord) => events(r).some((id) => replied.has(id));
    const where = [...this.posted.keys()].flatMap((id) => {
      const carriers = records.filter((r) => events(r).includes(id));
      if (carriers.some((r) => r.status === 'complete' && answered(r))) return [];
      const listed = carriers.map(
        (r) => `${r.batchId} ${r.status}${r.reason ? ` (${r.reason})` : ''}${answered(r) ? ' answered' : ''}`,
      );
      return [`${id} in [${listed.join(', ')}]`];
    });
    // turnsOnceAnswered counts carried prompts: one in two complete records stalls it as surely.
    const twice = [...this.posted.keys()].filter(
      (id) => records.filter((r) => r.status === 'complete' && events(r).includes(id)).length > 1,
    );
    const state = JSON.stringify(await queue.admin.state(this.threadKey));
    const warned = this.stack
      .warnings()
      .filter((line) => line.thread === this.threadKey || line.threadKey === this.threadKey)
      .map((line) => {
        const why = line.reason ?? (line.err as { message?: string } | undefined)?.message;
        return `${line.msg}${why ? ` (${why})` : ''}`;
      });
    return [
      `not answered: ${where.join('; ') || 'none'}`,
      `in two complete records: ${twice.join(', ') || 'none'}`,
      `thread state ${state}`,
      `the stack's warnings on the thread: ${warned.slice(-10).join(' | ') || 'none'}`,
    ].join('; ');
  }
}

function replyTo(body: unknown): string | undefined {
  return (body as { reply_to?: string }).reply_to;
}
