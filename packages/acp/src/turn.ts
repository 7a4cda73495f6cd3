import type { ContentBlock, Cost, StopReason } from '@agentclientprotocol/sdk';
import type { LogSink } from '@tributary/observability';
import type { AgentProcess } from './agent-process.js';
import { AgentRequestError, TurnCancelTimeoutError } from './errors.js';
import type { TurnEvent } from './turn-events.js';
import type { TurnUsage } from './turn-usage.js';

export interface TurnOptions {
  /** The session the caller attached for this turn; the turn fails if it is no longer the thread's live one. */
  sessionId?: string;
  /** Aborting sends session/cancel; the turn then ends `cancelled` or fails with TurnCancelTimeoutError. */
  signal?: AbortSignal;
  /** Every update of this turn, in arrival order, including those that precede the prompt's answer. */
  onUpdate?: (event: TurnEvent) => void;
}

export interface TurnResult {
  stopReason: StopReason;
  /**
   * The text of the turn's agent_message_chunk updates, concatenated; where a tool call, a plan, a
   * thought or a permission request came between two of them, a blank line separates them.
   */
  text: string;
  sessionId: string;
  /**
   * The agent ended this turn `end_turn` without a word, a tool call or a plan, right after the
   * session's previous turn was cancelled: some agents answer the prompt after a cancel at once with
   * nothing, and the model's answer then lags a turn. The caller may run the turn again elsewhere.
   */
  emptyAfterCancel: boolean;
  /** The tokens the turn used, where the agent reported them with its end. */
  usage?: TurnUsage;
  /** What the turn cost, where the agent reports its session's cost and the turn's share is known. */
  cost?: Cost;
}

/** Updates that end a run of message text: what follows them starts a paragraph of its own. */
const INTERRUPTIONS: ReadonlySet<TurnEvent['kind']> = new Set([
  'tool_call',
  'tool_call_update',
  'plan',
  'permission',
  'agent_thought_chunk',
]);

/** Updates that show the agent answered: what an agent that skips a prompt never sends. */
const SUBSTANCE: ReadonlySet<TurnEvent['kind']> = new Set([
  'agent_message_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
  'permission',
]);

/** What goes before text that resumes after an interruption, so it reads as a new paragraph. */
function paragraphBreak(text: string): string {
  if (text === '' || text.endsWith('\n\n')) return '';
  return text.endsWith('\n') ? '\n' : '\n\n';
}

/** The receiving end of one running prompt: the pool routes its session's updates here. */
export class ActiveTurn {
  readonly #onUpdate: ((event: TurnEvent) => void) | undefined;
  readonly #logger: LogSink;
  #text = '';
  #interrupted = false;
  #substantive = false;
  #cancelling = false;
  #answered = false;
  #sessionCost: Cost | undefined;

  constructor(onUpdate: ((event: TurnEvent) => void) | undefined, logger: LogSink) {
    this.#onUpdate = onUpdate;
    this.#logger = logger;
  }

  get text(): string {
    return this.#text;
  }

  /** Whether the agent said or did anything in this turn (text, a tool call, a plan, a permission). */
  get substantive(): boolean {
    return this.#substantive;
  }

  /** The session's cost so far, as the last usage report of this turn gave it. */
  get sessionCost(): Cost | undefined {
    return this.#sessionCost;
  }

  get cancelling(): boolean {
    return this.#cancelling;
  }

  /** Once the prompt is answered, further updates of the session are late, not part of this turn. */
  get answered(): boolean {
    return this.#answered;
  }

  markCancelling(): void {
    this.#cancelling = true;
  }

  markAnswered(): void {
    this.#answered = true;
  }

  /**
   * Hands an update to the listener. Message text that resumes after an interruption is handed over
   * with its paragraph break, so a streamed reply reads as the final text does.
   */
  deliver(update: TurnEvent): void {
    let event = update;
    if (SUBSTANCE.has(event.kind)) this.#substantive = true;
    if (event.kind === 'usage' && event.cost !== undefined) this.#sessionCost = event.cost;
    if (event.kind === 'agent_message_chunk' && event.content.type === 'text') {
      const text = (this.#interrupted ? paragraphBreak(this.#text) : '') + event.content.text;
      if (text !== event.content.text) event = { ...event, content: { ...event.content, text } };
      this.#text += text;
      if (text !== '') this.#interrupted = false;
    } else if (INTERRUPTIONS.has(event.kind)) {
      this.#interrupted = true;
    }
    try {
      this.#onUpdate?.(event);
    } catch (error) {
      // A faulty listener must not break protocol handling for the whole agent connection.
      this.#logger.warn({ err: error, kind: event.kind }, 'turn update listener threw');
    }
  }
}

export interface DriveTurnInput {
  agent: AgentProcess;
  /** How the session's previous turn ended, if it had one. */
  previousStopReason: StopReason | undefined;
  threadKey: string;
  sessionId: string;
  blocks: ContentBlock[];
  turn: ActiveTurn;
  signal: AbortSignal | undefined;
  cancelTimeoutMs: number;
  logger: LogSink;
}

/** Sends session/prompt and turns cancellation into session/cancel, bounded by a process kill. */
export async function driveTurn(input: DriveTurnInput): Promise<TurnResult> {
  const { agent, threadKey, sessionId, turn, signal, cancelTimeoutMs, logger } = input;
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    turn.markCancelling();
    logger.info({ threadKey, sessionId }, 'cancelling turn');
    void agent.cancel(sessionId);
    timer = setTimeout(() => {
      timedOut = true;
      logger.warn(
        { threadKey, sessionId, pid: agent.pid, cancelTimeoutMs },
        'cancel not honoured; killing agent',
      );
      void agent.kill();
    }, cancelTimeoutMs);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await agent.prompt(sessionId, input.blocks, () => turn.markAnswered());
    const emptyAfterCancel =
      input.previousStopReason === 'cancelled' &&
      response.stopReason === 'end_turn' &&
      !turn.substantive &&
      !turn.cancelling;
    return {
      stopReason: response.stopReason,
      text: turn.text,
      sessionId,
      emptyAfterCancel,
      ...(response.usage === undefined ? {} : { usage: response.usage }),
    };
  } catch (error) {
    if (timedOut) throw new TurnCancelTimeoutError(threadKey, sessionId, cancelTimeoutMs, { cause: error });
    // Some agents answer a cancelled prompt with an error instead of stopReason `cancelled`.
    if (turn.cancelling && error instanceof AgentRequestError) {
      return { stopReason: 'cancelled', text: turn.text, sessionId, emptyAfterCancel: false };
    }
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
