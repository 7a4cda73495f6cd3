import type { Inbound } from '../inbound.js';
import { editInbound } from '../inbound-message.js';
import type { JsonFields } from '../json-body.js';
import { isoFromUnixSeconds } from '../platform-time.js';
import { parseTelegramMessage } from './message.js';

/**
 * An `edited_message` or `edited_channel_post`: the whole message as it now reads, with `edit_date`.
 * The edit's identity is its update: `edit_date` has whole seconds, so two quick edits could share it,
 * while a redelivered update keeps its `update_id`.
 */
export function parseTelegramEdit(
  message: JsonFields,
  updateId: number,
  botUsername: string | undefined,
): Inbound {
  const parsed = parseTelegramMessage(message, botUsername);
  if (parsed.kind !== 'message') return parsed;
  const { message: original } = parsed;
  return editInbound({
    ...original,
    event: {
      ...original.event,
      editedAt: isoFromUnixSeconds(message.integer('edit_date'), message.field('edit_date')),
    },
    idempotencyKey: `${original.idempotencyKey}:edit:${updateId}`,
  });
}
