import type { Inbound, InboundAdapter, Verification, WebhookRequest } from '../inbound.js';
import { InvalidWebhookError } from '../inbound.js';
import { ignored } from '../inbound-message.js';
import { readJsonBody } from '../json-body.js';
import { TELEGRAM_MAX_AGE_MS } from '../platform-defaults.js';
import { isoFromUnixSeconds } from '../platform-time.js';
import { escapeRegExp, stripMention } from '../strip-mention.js';
import { rejected, requireSecret, sameSecret, VERIFIED } from '../webhook-checks.js';
import { parseTelegramCallback } from './callback.js';
import { parseTelegramEdit } from './edit.js';
import { parseTelegramMessage } from './message.js';

export const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

export interface TelegramInboundOptions {
  /** The `secret_token` given to setWebhook; Telegram echoes it in every delivery. */
  secretToken: string;
  /**
   * The bot's username, without '@'. Mentions of it, in any letter case, and replies to the bot's
   * messages are reported in `mentions` under exactly this spelling.
   */
  botUsername?: string;
  /**
   * A message (or edit) sent longer ago than this, by its `date` (`edit_date`), is ignored: answered,
   * never queued. Telegram retries an update for at most a day, so an older one is a replay, which
   * the dedup window may have forgotten. Default TELEGRAM_MAX_AGE_MS.
   */
  maxAgeMs?: number;
}

/**
 * Telegram Bot API webhook Updates. Dedup key `telegram:<chat>:<message_id>`, so an update delivered
 * twice (same update_id) is absorbed; thread rule in `parseTelegramMessage`. Edits arrive as
 * `edited_message` / `edited_channel_post`; the Bot API tells bots of no deletions. A message older
 * than the freshness window (`maxAgeMs`) is ignored.
 */
/** The update kinds ingress reads: what `setWebhook`'s `allowed_updates` must name. */
export const TELEGRAM_UPDATES = [
  'message',
  'channel_post',
  'edited_message',
  'edited_channel_post',
  'callback_query',
] as const;

function isTelegramUpdate(kind: string): kind is (typeof TELEGRAM_UPDATES)[number] {
  return (TELEGRAM_UPDATES as readonly string[]).includes(kind);
}

export class TelegramInboundAdapter implements InboundAdapter {
  readonly platform = 'telegram';

  constructor(private readonly options: TelegramInboundOptions) {
    requireSecret(options.secretToken, 'secretToken');
  }

  verify(request: WebhookRequest): Verification {
    const token = request.headers[TELEGRAM_SECRET_HEADER];
    if (token === undefined) return rejected(`missing ${TELEGRAM_SECRET_HEADER} header`);
    return sameSecret(token, this.options.secretToken)
      ? VERIFIED
      : rejected(`${TELEGRAM_SECRET_HEADER} is not the configured secret token`);
  }

  parse(request: WebhookRequest): Inbound {
    const update = readJsonBody(request.rawBody);
    const updateId = update.integer('update_id');
    // An Update carries exactly one optional field besides update_id; its name is the kind.
    const kind = update.keys().find((key) => key !== 'update_id');
    if (kind === undefined) throw new InvalidWebhookError('update carries nothing besides update_id');
    if (!isTelegramUpdate(kind)) return ignored(`telegram ${kind} update`);
    if (kind === 'callback_query') return parseTelegramCallback(update.object(kind));
    const edit = kind === 'edited_message' || kind === 'edited_channel_post';
    const message = update.object(kind);
    const dateField = edit ? 'edit_date' : 'date';
    const sentAt = isoFromUnixSeconds(message.integer(dateField), message.field(dateField));
    const maxAgeMs = this.options.maxAgeMs ?? TELEGRAM_MAX_AGE_MS;
    if (request.now - Date.parse(sentAt) > maxAgeMs) {
      return ignored(
        `telegram update ${updateId} is from ${sentAt}, older than the ${maxAgeMs} ms freshness window (TELEGRAM_MAX_AGE_MS)`,
      );
    }
    if (edit) return parseTelegramEdit(message, updateId, this.options.botUsername);
    return parseTelegramMessage(message, this.options.botUsername);
  }

  /**
   * `@<selfId>` where selfId is the bot username, in any letter case. A command's `/cmd@bot` suffix is
   * not a mention (no word boundary before '@') and stays for the control parser.
   */
  stripSelfMention(text: string, selfId: string, selfName?: string): string {
    const username = selfId.replace(/^@/, '');
    // The username is the name people write, so a mention in mid-sentence is kept in our spelling.
    return stripMention(text, `(?<![\\w@])@${escapeRegExp(username)}(?!\\w)`, selfName ?? username, 'i');
  }
}
