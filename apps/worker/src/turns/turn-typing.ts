import { type PlatformClient, platformOfThread } from '@tributary/platforms';
import type { Logger } from 'pino';
import type { TurnSignal } from './turn-signals.js';

/**
 * Shows that the bot is writing while a turn runs, where the platform has a typing indicator
 * (Telegram's chat action, Discord's typing): from the turn's start to its end, shown again before it
 * fades. Best effort: each showing is a draft (one attempt, no wait on a rate limit), and a turn whose
 * indicator fails says so once at warn and goes on.
 */
export class TurnTyping {
  private readonly showing = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly logger: Logger,
  ) {}

  readonly listener = (signal: TurnSignal): void => {
    if (signal.kind === 'started') this.start(signal);
    else if (signal.kind === 'finished') this.stop(signal.batchId);
  };

  private start(signal: TurnSignal): void {
    const client = this.clients.get(platformOfThread(signal.thread));
    if (client?.typing === undefined || this.showing.has(signal.batchId)) return;
    let warned = false;
    const show = () => {
      client.typing?.(signal.target).catch((error: unknown) => {
        if (warned) return;
        warned = true;
        this.logger.warn(
          { err: error, thread: signal.thread, platform: client.platform },
          'typing indicator not shown; the turn goes on',
        );
      });
    };
    show();
    const timer = setInterval(show, client.typingRefreshMs ?? 5_000);
    // A stopping worker hands its turns over ('finished'), which clears the timer; never wait for it.
    timer.unref();
    this.showing.set(signal.batchId, timer);
  }

  private stop(batchId: string): void {
    clearInterval(this.showing.get(batchId));
    this.showing.delete(batchId);
  }
}
