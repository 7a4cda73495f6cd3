import { type PlatformClient, platformOfThread } from '@tributary/platforms';
import type { Logger } from 'pino';
import type { OutboundMessage, OutboundSink } from './outbox.js';

/**
 * Logs every outbound message. Where no platform client takes the thread this is its reply path, at
 * info; where one does, the platform sink delivered it (a failure is the reply loop's warning), so the
 * line is debug: the turn already logged its dispatch and its end.
 */
export class LogReplySink implements OutboundSink {
  readonly name = 'log';

  constructor(
    private readonly logger: Logger,
    private readonly clients: ReadonlyMap<string, PlatformClient>,
  ) {}

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
    else if (!this.clients.has(platformOfThread(message.thread)))
      this.logger.info(fields, 'outbound message');
  }
}
