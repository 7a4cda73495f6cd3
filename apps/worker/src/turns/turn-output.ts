import type { SecretScrubber } from '@tributary/observability';
import {
  type Outbound,
  TurnFailedError,
  type TurnHandler,
  TurnNotStartedError,
  type TurnReport,
} from '@tributary/queue';
import { outboundFromPayload, toOutbound } from '../replies/outbox.js';
import type { ReplyCut } from '../replies/reply-cut.js';

/**
 * A turn's output on its one way out of the worker, to the commit: the reply for the batch's history,
 * the replies and notices for the thread's outbox and, when the turn failed, the reason the history,
 * the dead letter and the log keep. Whichever code of the turn made them, each is scrubbed here of the
 * secrets the worker holds; then a reply is cut to REPLY_MAX_PARTS messages for the outbox, while the
 * history keeps it whole. Scrubbing first: a blanked secret changes the reply's length.
 */
export function guardedTurns(handler: TurnHandler, secrets: SecretScrubber, cut: ReplyCut): TurnHandler {
  return async (batch, signal) => {
    let report: TurnReport;
    try {
      report = await handler(batch, signal);
    } catch (error) {
      // An aborted turn commits nothing: its outcome is the signal's reason.
      throw signal.aborted ? error : scrubbedFailure(error, secrets);
    }
    const reply = secrets.scrub(report.reply);
    // The reply is most often the outbox's text too: a long one is scrubbed once.
    const scrub = (text: string) => (text === report.reply ? reply : secrets.scrub(text));
    return {
      ...report,
      reply,
      ...(report.outbound === undefined
        ? {}
        : { outbound: report.outbound.map((outbound) => guarded(outbound, scrub, cut)) }),
    };
  };
}

/** The failure as the turn loop records it, scrubbed; the same kind of failure, so it is handled alike. */
function scrubbedFailure(error: unknown, secrets: SecretScrubber): Error {
  const reason = secrets.scrub(error instanceof Error ? error.message : String(error));
  const notices = (outbound: Outbound[]) =>
    outbound.map((notice) => guarded(notice, (text) => secrets.scrub(text)));
  if (error instanceof TurnNotStartedError) {
    return new TurnNotStartedError(reason, notices(error.notice), error.noticeAfterMs, error.reachedAgent);
  }
  if (error instanceof TurnFailedError) {
    return new TurnFailedError(reason, notices(error.outboundIfDead), error.final, error.splits);
  }
  return new Error(reason);
}

function guarded(outbound: Outbound, scrub: (text: string) => string, cut?: ReplyCut): Outbound {
  const message = outboundFromPayload(outbound.payload);
  const scrubbed = { ...message, text: scrub(message.text) };
  return { id: outbound.id, payload: toOutbound(cut ? cut.bound(scrubbed) : scrubbed).payload };
}
