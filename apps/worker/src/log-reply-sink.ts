import type { Logger } from 'pino';
import type { OutboundMessage, ReplySink } from './outbox.js';

/** Writes every outbound message to the log: the reply path when no platform is configured. */
export class LogReplySink implements ReplySink {
  readonly name = 'log';

  constructor(private readonly logger: Logger) {}

  async send(message: OutboundMessage): Promise<void> {
    this.logger.info(
      {
        thread: message.thread,
        batchId: message.batchId,
        kind: message.kind,
        stopReason: message.stopReason,
        text: message.text,
      },
      'outbound message',
    );
  }
}
