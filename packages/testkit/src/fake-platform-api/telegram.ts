import type { FileStore } from './file-store.js';
import type { FakeAnswer, FakePlatformHandler, FakeRequest } from './handler.js';
import type { MessageStore, StoredMessage } from './message-store.js';
import { readTelegramHtml } from './telegram-html.js';
import { TELEGRAM_ALLOWED_REACTIONS } from './telegram-reactions.js';
import type { FakeBots, FakeDirectory, FakeFailure } from './types.js';

/** Telegram counts message length in UTF-16 code units. */
const MAX_TEXT = 4096;
const PATH = /^\/bot([^/]+)\/([^/]+)$/;

/** Telegram Bot API at `/telegram/bot<token>/<method>`: `{ ok, result }` or `{ ok: false, error_code, description }`. */
export function telegramHandler(
  token: string,
  store: MessageStore,
  bot: FakeBots['telegram'],
  files: FileStore,
  directory: Pick<FakeDirectory, 'telegramMembers'>,
): FakePlatformHandler {
  const methods: Record<string, (args: Record<string, unknown>) => FakeAnswer> = {
    getMe: () => ok({ id: 1, is_bot: true, first_name: 'Fake', username: bot.username }),
    getChatMember: (args) => {
      const chat = idArg(args.chat_id);
      const user = idArg(args.user_id);
      if (chat === undefined) return error(400, 'Bad Request: chat not found');
      if (user === undefined) return error(400, 'Bad Request: user not found');
      const status = directory.telegramMembers.get(`${chat}:${user}`) ?? 'member';
      return ok({ status, user: { id: Number(user), is_bot: false, first_name: `user${user}` } });
    },
    getFile: (args) => {
      const file = files.telegramFile(typeof args.file_id === 'string' ? args.file_id : '');
      return file ? ok(file) : error(400, 'Bad Request: invalid file_id');
    },
    sendMessage: (args) => {
      const chat = idArg(args.chat_id);
      const shown = shownText(args);
      if (chat === undefined) return error(400, 'Bad Request: chat_id is empty');
      if ('refused' in shown) return shown.refused;
      const { text, markup } = shown;
      const keyboard = (args.reply_markup as { inline_keyboard?: { callback_data?: string }[][] } | undefined)
        ?.inline_keyboard;
      const buttons = keyboard?.flat() ?? [];
      if (buttons.some((button) => Buffer.byteLength(button.callback_data ?? '') > 64)) {
        return error(400, 'Bad Request: BUTTON_DATA_INVALID');
      }
      const reply = idArg((args.reply_parameters as { message_id?: unknown } | undefined)?.message_id);
      const message = store.put({
        channelId: chat,
        id: String(store.nextNumber()),
        threadId: idArg(args.message_thread_id),
        senderId: 'fake-bot',
        senderName: 'fake_bot',
        text,
        ...(markup === undefined ? {} : { markup }),
        timestamp: new Date().toISOString(),
        replyTo: reply,
      });
      return ok(telegramMessage(message));
    },
    editMessageText: (args) => {
      const message = store.get(idArg(args.chat_id) ?? '', idArg(args.message_id) ?? '');
      if (!message) return error(400, 'Bad Request: message to edit not found');
      const shown = shownText(args);
      if ('refused' in shown) return shown.refused;
      const { text, markup } = shown;
      if (text === message.text && markup === message.markup) {
        return error(
          400,
          'Bad Request: message is not modified: specified new message content and reply markup are exactly ' +
            'the same as a current content and reply markup of the message',
        );
      }
      message.text = text;
      if (markup === undefined) delete message.markup;
      else message.markup = markup;
      return ok(telegramMessage(message));
    },
    setMyCommands: (args) => {
      const commands = Array.isArray(args.commands)
        ? (args.commands as { command?: unknown; description?: unknown }[])
        : [];
      const invalid = commands.some(
        ({ command, description }) =>
          typeof command !== 'string' ||
          !/^[a-z0-9_]{1,32}$/.test(command) ||
          typeof description !== 'string' ||
          description.length < 1 ||
          description.length > 256,
      );
      return invalid || commands.length > 100 ? error(400, 'Bad Request: BOT_COMMAND_INVALID') : ok(true);
    },
    sendChatAction: (args) => {
      if (idArg(args.chat_id) === undefined) return error(400, 'Bad Request: chat_id is empty');
      const actions = ['typing', 'upload_photo', 'upload_document', 'record_voice', 'choose_sticker'];
      return actions.includes(String(args.action))
        ? ok(true)
        : error(400, 'Bad Request: wrong parameter action in request');
    },
    setMessageReaction: (args) => {
      if (idArg(args.chat_id) === undefined || idArg(args.message_id) === undefined) {
        return error(400, 'Bad Request: message to react not found');
      }
      const reactions = Array.isArray(args.reaction) ? (args.reaction as { emoji?: unknown }[]) : [];
      if (reactions.length > 1) return error(400, 'Bad Request: REACTIONS_TOO_MANY');
      const invalid = reactions.some((reaction) => !TELEGRAM_ALLOWED_REACTIONS.has(String(reaction.emoji)));
      return invalid ? error(400, 'Bad Request: REACTION_INVALID') : ok(true);
    },
  };

  return {
    platform: 'telegram',
    method: (request) => PATH.exec(request.path)?.[2] ?? 'unknown',
    recordedPath: (request) => request.path.replace(PATH, '/bot<token>/$2'),
    authorized: (request) => PATH.exec(request.path)?.[1] === token,
    unauthorized: () => error(401, 'Unauthorized'),
    failure: (failure) => telegramFailure(failure),
    handle: (request: FakeRequest, method) =>
      methods[method]?.(request.payload ?? {}) ?? error(404, 'Not Found'),
  };
}

function telegramFailure({ status, retryAfterSeconds, error: description }: FakeFailure): FakeAnswer {
  if (status === 429) {
    const seconds = Math.ceil(retryAfterSeconds ?? 1);
    return {
      status,
      body: {
        ok: false,
        error_code: 429,
        description: description ?? `Too Many Requests: retry after ${seconds}`,
        parameters: { retry_after: seconds },
      },
    };
  }
  return error(status, description ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request'));
}

/** What a message shows: its text, read as HTML under `parse_mode: "HTML"`; refused as Telegram refuses. */
function shownText(
  args: Record<string, unknown>,
): { text: string; markup?: string } | { refused: FakeAnswer } {
  const sent = typeof args.text === 'string' ? args.text : '';
  let shown: { text: string; markup?: string } = { text: sent };
  if (args.parse_mode === 'HTML') {
    const reading = readTelegramHtml(sent);
    if (!reading.ok) return { refused: error(400, reading.error) };
    shown = { text: reading.text, markup: sent };
  } else if (args.parse_mode !== undefined) {
    return { refused: error(400, `Bad Request: unsupported parse_mode ${String(args.parse_mode)}`) };
  }
  if (!shown.text.trim()) return { refused: error(400, 'Bad Request: message text is empty') };
  if (shown.text.length > MAX_TEXT) return { refused: error(400, 'Bad Request: message is too long') };
  return shown;
}

function ok(result: unknown): FakeAnswer {
  return { status: 200, body: { ok: true, result } };
}

function error(status: number, description: string): FakeAnswer {
  return { status, body: { ok: false, error_code: status, description } };
}

function telegramMessage(message: StoredMessage) {
  return {
    message_id: Number(message.id),
    date: Math.floor(Date.parse(message.timestamp) / 1000),
    chat: { id: Number(message.channelId) || message.channelId, type: 'supergroup' },
    from: { id: 1, is_bot: true, first_name: 'Fake', username: message.senderName },
    text: message.text,
    ...(message.threadId === undefined ? {} : { message_thread_id: Number(message.threadId) }),
    ...(message.replyTo === undefined ? {} : { reply_to_message: { message_id: Number(message.replyTo) } }),
  };
}

/** Telegram ids arrive as numbers or strings; the store keys them as strings. */
function idArg(value: unknown): string | undefined {
  return typeof value === 'number' || (typeof value === 'string' && value !== '') ? String(value) : undefined;
}
