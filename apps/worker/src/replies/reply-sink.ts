import type { ReplySink } from '@tributary/queue';
import { type OutboundSink, outboundFromPayload } from './outbox.js';
import type { PlatformReplySink } from './platform-reply-sink.js';

/**
 * The worker's reply sink for its runner: the committed payload read back (either release's, see
 * outbox.ts), posted through the thread's platform first, then handed to the other sinks (the log, a
 * test's capture): a reply counts as sent only once the platform took it.
 */
export function replySink(platform: PlatformReplySink, others: readonly OutboundSink[]): ReplySink {
  return {
    async deliver(attempt) {
      const message = outboundFromPayload(attempt.payload);
      const last = await platform.deliver(message, attempt);
      for (const sink of others) await sink.send(message, attempt.id);
      return last;
    },
  };
}
