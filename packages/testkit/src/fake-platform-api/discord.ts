import type { FakeAnswer, FakePlatformHandler, FakeRequest } from './handler.js';
import type { MessageStore, StoredMessage } from './message-store.js';
import type { FakeBots, FakeFailure } from './types.js';

/** Discord counts message length in characters; UTF-16 units are the stricter bound a fake can use. */
const MAX_CONTENT = 2000;
/** Discord's epoch (2015-01-01), the base of snowflake ids. */
const DISCORD_EPOCH = 1_420_070_400_000n;

const ROUTES: { verb: string; pattern: RegExp; method: string }[] = [
  { verb: 'GET', pattern: /^\/users\/@me$/, method: 'getCurrentUser' },
  { verb: 'GET', pattern: /^\/applications\/@me$/, method: 'getCurrentApplication' },
  {
    verb: 'PUT',
    pattern: /^\/applications\/[^/]+\/commands$/,
    method: 'bulkOverwriteGlobalApplicationCommands',
  },
  { verb: 'POST', pattern: /^\/channels\/[^/]+\/messages$/, method: 'createMessage' },
  { verb: 'GET', pattern: /^\/channels\/[^/]+\/messages\/[^/]+$/, method: 'getMessage' },
  { verb: 'PATCH', pattern: /^\/channels\/[^/]+\/messages\/[^/]+$/, method: 'editMessage' },
  { verb: 'POST', pattern: /^\/channels\/[^/]+\/typing$/, method: 'triggerTyping' },
  {
    verb: 'PUT',
    pattern: /^\/channels\/[^/]+\/messages\/[^/]+\/reactions\/[^/]+\/@me$/,
    method: 'addReaction',
  },
  {
    verb: 'DELETE',
    pattern: /^\/channels\/[^/]+\/messages\/[^/]+\/reactions\/[^/]+\/@me$/,
    method: 'removeReaction',
  },
];

/** Discord REST v10 at `/discord/api/v10/...`: `{ code, message }` errors, `Authorization: Bot <token>`. */
export function discordHandler(
  token: string,
  store: MessageStore,
  bot: FakeBots['discord'],
): FakePlatformHandler {
  const unknownMessage = () => error(404, 10008, 'Unknown Message');
  const methods: Record<string, (segments: string[], args: Record<string, unknown>) => FakeAnswer> = {
    getCurrentUser: () => ({ status: 200, body: { id: bot.id, username: bot.username, bot: true } }),
    // A bot's user and its application share the id, as for every application made since 2021.
    getCurrentApplication: () => ({ status: 200, body: { id: bot.id, name: bot.username } }),
    bulkOverwriteGlobalApplicationCommands: ([, application = ''], args) => {
      if (application !== bot.id) return error(404, 10002, 'Unknown Application');
      const commands = Array.isArray(args) ? (args as { name?: unknown; description?: unknown }[]) : [];
      const invalid = commands.some(
        ({ name, description }) =>
          typeof name !== 'string' ||
          !/^[-_\p{Ll}\p{N}]{1,32}$/u.test(name) ||
          typeof description !== 'string' ||
          description.length < 1 ||
          description.length > 100,
      );
      if (invalid) return error(400, 50035, 'Invalid Form Body');
      return {
        status: 200,
        body: commands.map((command, i) => ({
          id: String(1_000 + i),
          application_id: application,
          ...command,
        })),
      };
    },
    createMessage: ([, channel = ''], args) => {
      const content = typeof args.content === 'string' ? args.content : '';
      if (!content.trim()) return error(400, 50006, 'Cannot send an empty message');
      if (content.length > MAX_CONTENT) return error(400, 50035, 'Invalid Form Body');
      if (!validComponents(args.components)) return error(400, 50035, 'Invalid Form Body');
      const reference = (args.message_reference as { message_id?: unknown } | undefined)?.message_id;
      const message = store.put({
        channelId: channel,
        id: snowflake(store.nextNumber()),
        senderId: bot.id,
        senderName: 'fake-bot',
        text: content,
        timestamp: new Date().toISOString(),
        replyTo: typeof reference === 'string' ? reference : undefined,
      });
      return { status: 200, body: discordMessage(message) };
    },
    getMessage: ([, channel = '', , id = '']) => {
      const message = store.get(channel, id);
      return message ? { status: 200, body: discordMessage(message) } : unknownMessage();
    },
    editMessage: ([, channel = '', , id = ''], args) => {
      const message = store.get(channel, id);
      if (!message) return unknownMessage();
      if (typeof args.content === 'string') message.text = args.content;
      return { status: 200, body: discordMessage(message) };
    },
    triggerTyping: () => ({ status: 204 }),
    addReaction: () => ({ status: 204 }),
    removeReaction: () => ({ status: 204 }),
  };

  return {
    platform: 'discord',
    method: (request) =>
      ROUTES.find((route) => route.verb === request.verb && route.pattern.test(request.path))?.method ??
      'unknown',
    recordedPath: (request) => request.path,
    authorized: (request) => request.headers.authorization === `Bot ${token}`,
    unauthorized: () => error(401, 0, '401: Unauthorized'),
    failure: (failure) => discordFailure(failure),
    handle: (request: FakeRequest, method) =>
      methods[method]?.(request.path.slice(1).split('/'), request.payload ?? {}) ??
      error(404, 0, '404: Not Found'),
  };
}

/** Discord's documented bounds on a row of buttons: five, each labelled and with a custom_id of 100. */
function validComponents(components: unknown): boolean {
  if (components === undefined) return true;
  if (!Array.isArray(components) || components.length > 5) return false;
  return (components as { type?: number; components?: unknown[] }[]).every((row) => {
    const buttons = (row.components ?? []) as {
      type?: number;
      label?: string;
      custom_id?: string;
      style?: number;
    }[];
    return (
      row.type === 1 &&
      buttons.length >= 1 &&
      buttons.length <= 5 &&
      buttons.every(
        (button) =>
          button.type === 2 &&
          (button.label?.length ?? 0) <= 80 &&
          (button.custom_id?.length ?? 0) >= 1 &&
          (button.custom_id?.length ?? 0) <= 100 &&
          [1, 2, 3, 4].includes(button.style ?? 0),
      )
    );
  });
}

function discordFailure({ status, retryAfterSeconds, error: message }: FakeFailure): FakeAnswer {
  if (status === 429) {
    const seconds = retryAfterSeconds ?? 1;
    return {
      status,
      // The header has whole seconds; the body has the precise float.
      headers: { 'retry-after': String(Math.ceil(seconds)), 'x-ratelimit-scope': 'user' },
      body: { message: message ?? 'You are being rate limited.', retry_after: seconds, global: false },
    };
  }
  return error(status, 0, message ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request'));
}

function error(status: number, code: number, message: string): FakeAnswer {
  return { status, body: { code, message } };
}

function discordMessage(message: StoredMessage) {
  return {
    id: message.id,
    type: message.replyTo === undefined ? 0 : 19,
    channel_id: message.channelId,
    content: message.text,
    timestamp: message.timestamp,
    author: { id: message.senderId, username: message.senderName, global_name: message.senderName },
    ...(message.replyTo === undefined ? {} : { message_reference: { message_id: message.replyTo } }),
  };
}

function snowflake(n: number): string {
  return String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | BigInt(n % 4096));
}
