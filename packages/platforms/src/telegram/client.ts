import { type ApprovalPrompt, approvalButton } from '../approval-buttons.js';
import { FileFetchError } from '../files/file-fetch-error.js';
import {
  type DownloadLimits,
  type FetchedFile,
  fileTooLarge,
  guardedDownload,
  operatorChosen,
} from '../files/guarded-download.js';
import { toTelegramHtml, toTelegramPlain } from '../format/telegram-html.js';
import { objectField } from '../http/answer.js';
import { requireId } from '../http/answer-id.js';
import { botKey, paced } from '../http/paced.js';
import { type PlatformHttp, type TokenClientOptions, tokenClientHttp } from '../http/platform-http.js';
import type { MessageRef } from '../message-ref.js';
import {
  type BotIdentity,
  type ListedCommand,
  PlatformApiError,
  type PlatformClient,
  type Reaction,
  type SendOptions,
  type WriteOptions,
} from '../outbound.js';
import { TELEGRAM_API_URL } from '../platform-defaults.js';
import { classifyTelegramAnswer } from './answer.js';
import { LastReaction } from './last-reaction.js';
import { TELEGRAM_REACTIONS } from './reactions.js';

export interface TelegramClientOptions extends TokenClientOptions {
  /** Told when Telegram refused a message's HTML and it went out as plain text instead. */
  onPlainFallback?: (method: string, reason: string) => void;
}

/**
 * Telegram Bot API. No `fetchThreadParent`: Telegram delivers the replied-to message inside the update.
 */
export class TelegramClient implements PlatformClient {
  readonly platform = 'telegram';
  readonly maxMessageLength = 4096;
  /** A chat action shows for five seconds or until the bot's next message. */
  readonly typingRefreshMs = 4_000;
  private readonly http: PlatformHttp;
  private readonly baseUrl: string;
  private readonly lastReaction = new LastReaction();

  constructor(private readonly options: TelegramClientOptions) {
    ({ baseUrl: this.baseUrl, http: this.http } = tokenClientHttp(options, {
      platform: this.platform,
      classify: classifyTelegramAnswer,
      authHint: 'check TELEGRAM_BOT_TOKEN and that the bot is still in the chat',
      defaultBaseUrl: TELEGRAM_API_URL,
    }));
  }

  render(markdown: string): string {
    return toTelegramHtml(markdown);
  }

  async send(target: MessageRef, markdown: string, options: SendOptions = {}): Promise<string> {
    return this.sendWith(target, markdown, options, {});
  }

  /** The request with an inline keyboard, one button per option, each on its own row. */
  async askApproval(target: MessageRef, prompt: ApprovalPrompt): Promise<string> {
    const inline_keyboard = prompt.options.map((option, index) => [
      { text: option.name, callback_data: approvalButton(prompt.id, index) },
    ]);
    return this.sendWith(target, prompt.text, {}, { reply_markup: { inline_keyboard } });
  }

  /** An edit without `reply_markup` takes the keyboard away. */
  async settleApproval(target: MessageRef, messageId: string, markdown: string): Promise<void> {
    await this.edit(target, messageId, markdown);
  }

  private async sendWith(
    target: MessageRef,
    markdown: string,
    options: SendOptions,
    extra: Record<string, unknown>,
  ): Promise<string> {
    const method = 'sendMessage';
    const answer = await this.formatted(method, markdown, options, {
      chat_id: telegramId(target.channelId),
      message_thread_id: target.threadId === undefined ? undefined : telegramId(target.threadId),
      // Still post when the quoted message was deleted meanwhile.
      reply_parameters: { message_id: telegramId(target.messageId), allow_sending_without_reply: true },
      ...extra,
    });
    return requireId(
      this.platform,
      method,
      answer,
      objectField(objectField(answer.body, 'result'), 'message_id'),
    );
  }

  async edit(
    target: MessageRef,
    messageId: string,
    markdown: string,
    options: WriteOptions = {},
  ): Promise<void> {
    await this.formatted('editMessageText', markdown, options, {
      chat_id: telegramId(target.channelId),
      message_id: telegramId(messageId),
    });
  }

  /**
   * Edits count against a chat's messages: about one a second in a private chat, 20 a minute in a
   * group (negative chat ids are groups and channels).
   */
  editIntervalMs(target: MessageRef): number {
    return target.channelId.startsWith('-') ? 3_000 : 1_000;
  }

  async typing(target: MessageRef): Promise<void> {
    await this.post(
      'sendChatAction',
      {
        chat_id: telegramId(target.channelId),
        message_thread_id: target.threadId === undefined ? undefined : telegramId(target.threadId),
        action: 'typing',
      },
      { draft: true },
    );
  }

  /**
   * Posts the Markdown as HTML; when Telegram refuses an entity in it (`can't parse entities`), posts
   * the same text without markup, so that the reply still arrives, only plainer.
   */
  private async formatted(
    method: string,
    markdown: string,
    options: WriteOptions,
    args: Record<string, unknown>,
  ) {
    const limits = this.limits(String(args.chat_id));
    await paced(this.options.pace, this.platform, method, limits, options.draft === true);
    try {
      return await this.post(method, { ...args, text: this.render(markdown), parse_mode: 'HTML' }, options);
    } catch (error) {
      if (!(error instanceof PlatformApiError && error.code?.includes("can't parse entities"))) throw error;
      this.options.onPlainFallback?.(method, error.code);
      return await this.post(method, { ...args, text: toTelegramPlain(markdown) }, options);
    }
  }

  async react(message: MessageRef, reaction: Reaction): Promise<void> {
    await this.setReaction(message, reaction);
  }

  /** Clears the bot's reaction, unless we know it was already replaced by another one. */
  async unreact(message: MessageRef, reaction: Reaction): Promise<void> {
    if (this.lastReaction.replacedOtherThan(messageKey(message), reaction)) return;
    await this.setReaction(message, undefined);
  }

  private async setReaction(message: MessageRef, reaction: Reaction | undefined): Promise<void> {
    await this.post('setMessageReaction', {
      chat_id: telegramId(message.channelId),
      message_id: telegramId(message.messageId),
      reaction: reaction === undefined ? [] : [{ type: 'emoji', emoji: TELEGRAM_REACTIONS[reaction] }],
    });
    this.lastReaction.set(messageKey(message), reaction);
  }

  /** `getFile`, then the file from the API's own `/file/bot<token>/<path>`: the only host allowed. */
  async fetchFile(fileId: string, limits: DownloadLimits): Promise<FetchedFile> {
    const { body } = await this.post('getFile', { file_id: fileId });
    const path = objectField(objectField(body, 'result'), 'file_path');
    if (typeof path !== 'string' || path === '') {
      throw new FileFetchError('failed', 'Telegram gave no file_path for the file');
    }
    const size = objectField(objectField(body, 'result'), 'file_size');
    if (typeof size === 'number' && size > limits.maxBytes) {
      throw fileTooLarge(limits.maxBytes);
    }
    return guardedDownload({
      url: new URL(`${this.baseUrl}/file/bot${this.options.token}/${path}`),
      allowedOrigins: [new URL(this.baseUrl).origin],
      // A self-hosted Bot API server (TELEGRAM_API_URL) often runs beside the broker.
      configuredOrigins: operatorChosen(this.baseUrl, [TELEGRAM_API_URL]),
      ...limits,
    });
  }

  /**
   * Sets the bot's command list (setMyCommands) that Telegram offers when people type `/`. Telegram's
   * names hold no `-`: `cancel-all` is listed as `cancel_all`, which ingress reads as the same command.
   */
  async setCommands(commands: readonly ListedCommand[]): Promise<void> {
    await this.post('setMyCommands', {
      commands: commands.map(({ name, description }) => ({
        command: name.replaceAll('-', '_'),
        description,
      })),
    });
  }

  /** The one group Telegram keeps per chat: `admins`, its owner and administrators (getChatMember). */
  async memberOf(target: MessageRef, userId: string, groups: readonly string[]): Promise<string[]> {
    if (!groups.includes(TELEGRAM_ADMINS)) return [];
    const { body } = await this.post('getChatMember', {
      chat_id: telegramId(target.channelId),
      user_id: telegramId(userId),
    });
    const status = objectField(objectField(body, 'result'), 'status');
    return status === 'creator' || status === 'administrator' ? [TELEGRAM_ADMINS] : [];
  }

  async whoAmI(): Promise<BotIdentity> {
    const { body } = await this.post('getMe', {});
    const username = objectField(objectField(body, 'result'), 'username');
    if (typeof username !== 'string' || username === '') {
      throw new PlatformApiError(this.platform, 'getMe', 200, 'the answer names no username');
    }
    return { id: username, name: username };
  }

  /**
   * Telegram's limits: about one message a second in a chat, 20 a minute in a group, 30 a second for
   * the whole bot; edits count as messages.
   */
  private limits(chatId: string) {
    return [
      { key: `telegram:chat:${chatId}`, perMinute: chatId.startsWith('-') ? 20 : 60, burst: 3 },
      { key: botKey(this.platform, this.options.token), perMinute: 1_800, burst: 30 },
    ];
  }

  private post(method: string, args: Record<string, unknown>, { draft }: WriteOptions = {}) {
    return this.http.call({
      method,
      url: `${this.baseUrl}/bot${this.options.token}/${method}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(args),
      once: draft === true,
    });
  }
}

/** APPROVERS `telegram:group:admins`: whoever administers the chat of the request. */
const TELEGRAM_ADMINS = 'admins';

function messageKey(message: MessageRef): string {
  return `${message.channelId}:${message.messageId}`;
}

/** Telegram ids are integers; a `@channelname` chat id stays a string. */
function telegramId(id: string): number | string {
  return /^-?\d+$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : id;
}
