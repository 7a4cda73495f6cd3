import type { ContentBlock, StopReason } from '@agentclientprotocol/sdk';
import type { LogSink } from '@tributary/observability';
import type { AgentProcess } from './agent-process.js';
import { AgentRequestError, TurnCancelTimeoutError } from './errors.js';
import type { TurnEvent } from './turn-events.js';

export interface TurnOptions {
  /** Aborting sends session/cancel; the turn then ends `cancelled` or fails with TurnCancelTimeoutError. */
  signal?: AbortSignal;
  /** Every update of this turn, in arrival order, including those that precede the prompt's answer. */
  onUpdate?: (event: TurnEvent) => void;
}

export interface TurnResult {
  stopReason: StopReason;
  /** The text of all agent_message_chunk updates of the turn, concatenated. */
  text: string;
  sessionId: string;
}

/** The receiving end of one running prompt: the pool routes its session's updates here. */
export class ActiveTurn {
  readonly #onUpdate: ((event: TurnEvent) => void) | undefined;
  readonly #logger: LogSink;
  #text = '';
  #cancelling = false;
  #answered = false;

  constructor(onUpdate: ((event: TurnEvent) => void) | undefined, logger: LogSink) {
    this.#onUpdate = onUpdate;
    this.#logger = logger;
  }

  get text(): string {
    return this.#text;
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

  deliver(event: TurnEvent): void {
    if (event.kind === 'agent_message_chunk' && event.content.type === 'text')
      this.#text += event.content.text;
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
    return { stopReason: response.stopReason, text: turn.text, sessionId };
  } catch (error) {
    if (timedOut) throw new TurnCancelTimeoutError(threadKey, sessionId, cancelTimeoutMs, { cause: error });
    // Some agents answer a cancelled prompt with an error instead of stopReason `cancelled`.
    if (turn.cancelling && error instanceof AgentRequestError) {
      return { stopReason: 'cancelled', text: turn.text, sessionId };
    }
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
