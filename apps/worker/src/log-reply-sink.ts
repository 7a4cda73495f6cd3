import type { Logger } from 'pino';
import type { OutboundMessage, ReplySink } from './outbox.js';

/** Logs every outbound message: the reply path when no platform is configured. */
export class LogReplySink implements ReplySink {
  readonly name = 'log';

  constructor(private readonly logger: Logger) {}

  async send(message: OutboundMessage): Promise<void> {
    const fields = {
      thread: message.thread,
      batchId: message.batchId,
      kind: message.kind,
      stopReason: message.stopReason,
      chars: message.text.length,
    };
    // Message text is user content: only at debug level.
    if (this.logger.isLevelEnabled('debug'))
      this.logger.debug({ ...fields, text: message.text }, 'outbound message');
    else this.logger.info(fields, 'outbound message');
  }
}
