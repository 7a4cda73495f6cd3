import {
  arrivalFromBody,
  buildHistoryBlock,
  type HistoryBlock,
  type HistoryBlockOptions,
  type HistoryTurn,
} from '@tributary/packing';
import type { BatchRecord } from '@tributary/queue';

/**
 * The history block that opens a fresh session's first prompt: the thread's complete batches only
 * (never a cancelled, failed, dead-lettered or still unfinished one), oldest first, within `maxTokens`.
 * `records` come newest first, as the queue keeps them. Undefined when there is nothing to restore.
 */
export function historySeed(
  thread: string,
  records: readonly BatchRecord[],
  caps: HistoryBlockOptions['caps'],
  maxTokens: number,
): HistoryBlock | undefined {
  const turns: HistoryTurn[] = records
    .filter((record) => record.status === 'complete')
    .reverse()
    .map((record) => ({
      batchId: record.batchId,
      endedAt: record.endedAt,
      // A batch completed only after its bodies were read as events, so they parse.
      events: record.messages.map((message) => arrivalFromBody(message.body)),
      reply: record.reply ?? '',
      stopReason: record.stopReason ?? 'end_turn',
    }));
  return buildHistoryBlock(thread, turns, { maxTokens, caps });
}
