import type { ArrivalEvent } from '@tributary/packing';
import { type ApprovalPrompt, approvalButton, isRefusal } from '../approval-buttons.js';
import { FileFetchError } from '../files/file-fetch-error.js';
import {
  type DownloadLimits,
  type FetchedFile,
  guardedDownload,
  operatorChosen,
} from '../files/guarded-download.js';
import { objectField, type PlatformAnswer } from '../http/answer.js';
import { requireId } from '../http/answer-id.js';
import { botKey, paced } from '../http/paced.js';
import {
  type PlatformHttp,
  type PlatformRequest,
  type TokenClientOptions,
  tokenClientHttp,
} from '../http/platform-http.js';
import type { MessageRef } from '../message-ref.js';
import {
  type BotIdentity,
  type ListedCommand,
  PlatformApiError,
  type PlatformClient,
  type Reaction,
  type SendOptions,
  type ThreadParent,
  type WriteOptions,
} from '../outbound.js';
import { DISCORD_API_URL } from '../platform-defaults.js';
import { isoFromRfc3339 } from '../platform-time.js';
import { isEventItself } from '../thread-parent.js';
import { UNICODE_REACTIONS } from '../unicode-reactions.js';
import { classifyDiscordAnswer } from './answer.js';

/** An application command typed in the message box (a slash command). */
const CHAT_INPUT = 1;
/** Message component types and button styles. */
const ACTION_ROW = 1;
const BUTTON = 2;
const SUCCESS = 3;
const DANGER = 4;

/** Where message attachments live; their URLs are signed, so no token goes with them. */
export const DISCORD_CDN_URLS = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];

export interface DiscordClientOptions extends TokenClientOptions {
  /** The only origin attachments are downloaded from, instead of Discord's CDN (a fake one in tests). */
  cdnUrl?: string;
}

/**
 * Discord REST v10. A thread is a channel of its own: messages in it are posted to and addressed in
 * the thread's channel id, and a thread started from a message carries that message's id.
 */
export class DiscordClient implements PlatformClient {
  readonly platform = 'discord';
  readonly maxMessageLength = 2000;
  /** Typing shows for about ten seconds or until the bot's next message. */
  readonly typingRefreshMs = 8_000;
  private readonly http: PlatformHttp;
  private readonly baseUrl: string;

  constructor(private readonly options: DiscordClientOptions) {
    ({ baseUrl: this.baseUrl, http: this.http } = tokenClientHttp(options, {
      platform: this.platform,
      classify: classifyDiscordAnswer,
      authHint: "check DISCORD_BOT_TOKEN and the bot's permissions in the channel",
      defaultBaseUrl: DISCORD_API_URL,
    }));
  }

  /** Discord reads Markdown itself; mentions are held back by `allowed_mentions` instead. */
  render(markdown: string): string {
    return markdown;
  }

  async send(target: MessageRef, text: string, options: SendOptions = {}): Promise<string> {
    const method = 'createMessage';
    await this.paced(method, target, options);
    const answer = await this.request(
      method,
      'POST',
      `/channels/${channelOf(target)}/messages`,
      {
        content: text,
        message_reference: { message_id: target.messageId, fail_if_not_exists: false },
        // Agent text must not ping @everyone, @here or roles; users it names and the asker are fine.
        allowed_mentions: { parse: ['users'], replied_user: true },
      },
      options,
    );
    return requireId(this.platform, method, answer, objectField(answer.body, 'id'));
  }

  /** Message components: a row of buttons (five at most, Discord's limit), green grants, red refusals. */
  async askApproval(target: MessageRef, prompt: ApprovalPrompt): Promise<string> {
    const method = 'createMessage';
    await this.paced(method, target, {});
    const buttons = prompt.options.slice(0, 5).map((option, index) => ({
      type: BUTTON,
      style: isRefusal(option.kind) ? DANGER : SUCCESS,
      label: option.name.slice(0, 80),
      custom_id: approvalButton(prompt.id, index),
    }));
    const answer = await this.request(method, 'POST', `/channels/${channelOf(target)}/messages`, {
      content: prompt.text,
      message_reference: { message_id: target.messageId, fail_if_not_exists: false },
      allowed_mentions: { parse: [] },
      components: [{ type: ACTION_ROW, components: buttons }],
    });
    return requireId(this.platform, method, answer, objectField(answer.body, 'id'));
  }

  /** The text, and no components left to click. */
  async settleApproval(target: MessageRef, messageId: string, markdown: string): Promise<void> {
    await this.paced('editMessage', target, {});
    const path = `/channels/${channelOf(target)}/messages/${messageId}`;
    await this.request('editMessage', 'PATCH', path, { content: markdown, components: [] });
  }

  async edit(target: MessageRef, messageId: string, text: string, options: WriteOptions = {}): Promise<void> {
    await this.paced('editMessage', target, options);
    const path = `/channels/${channelOf(target)}/messages/${messageId}`;
    await this.request('editMessage', 'PATCH', path, { content: text }, options);
  }

  /** A channel takes about five message writes per five seconds. */
  editIntervalMs(): number {
    return 1_000;
  }

  async typing(target: MessageRef): Promise<void> {
    await this.request('triggerTyping', 'POST', `/channels/${channelOf(target)}/typing`, undefined, {
      draft: true,
    });
  }

  async react(message: MessageRef, reaction: Reaction): Promise<void> {
    await this.request('addReaction', 'PUT', reactionPath(message, reaction));
  }

  async unreact(message: MessageRef, reaction: Reaction): Promise<void> {
    await this.request('removeReaction', 'DELETE', reactionPath(message, reaction));
  }

  /** The message the event's thread was started from; undefined outside threads and for other threads. */
  async fetchThreadParent(event: ArrivalEvent): Promise<ThreadParent | undefined> {
    if (event.threadId === undefined) return undefined;
    let answer: PlatformAnswer;
    try {
      answer = await this.request(
        'getMessage',
        'GET',
        `/channels/${event.channelId}/messages/${event.threadId}`,
      );
    } catch (error) {
      // Threads not started from a message (forum posts, private threads) have no such message.
      if (error instanceof PlatformApiError && error.status === 404) return undefined;
      throw error;
    }
    const message = answer.body as Partial<DiscordMessage> | undefined;
    const parent: ThreadParent = {
      messageId: requireId(this.platform, 'getMessage', answer, message?.id),
      senderId: message?.author?.id ?? '',
      senderName: message?.author?.global_name ?? message?.author?.username ?? '',
      text: message?.content ?? '',
      timestamp: isoFromRfc3339(message?.timestamp ?? '', 'timestamp'),
    };
    return isEventItself(parent, event) ? undefined : parent;
  }

  async fetchFile(ref: string, limits: DownloadLimits): Promise<FetchedFile> {
    if (!URL.canParse(ref)) throw new FileFetchError('refused', 'the attachment has no URL');
    return guardedDownload({
      url: new URL(ref),
      allowedOrigins: this.options.cdnUrl === undefined ? DISCORD_CDN_URLS : [this.options.cdnUrl],
      configuredOrigins: operatorChosen(this.options.cdnUrl, DISCORD_CDN_URLS),
      ...limits,
    });
  }

  /**
   * Registers `commands` as the application's global commands, replacing those it had (a bulk
   * overwrite), and returns the application's id.
   */
  async registerCommands(commands: readonly ListedCommand[]): Promise<string> {
    const application = await this.request('getCurrentApplication', 'GET', '/applications/@me');
    const id = requireId(
      this.platform,
      'getCurrentApplication',
      application,
      objectField(application.body, 'id'),
    );
    const body = commands.map(({ name, description }) => ({ name, description, type: CHAT_INPUT }));
    await this.http.call({
      method: 'bulkOverwriteGlobalApplicationCommands',
      verb: 'PUT',
      url: `${this.baseUrl}/applications/${id}/commands`,
      headers: { authorization: `Bot ${this.options.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return id;
  }

  async whoAmI(): Promise<BotIdentity> {
    const answer = await this.request('getCurrentUser', 'GET', '/users/@me');
    const id = requireId(this.platform, 'getCurrentUser', answer, objectField(answer.body, 'id'));
    const name = objectField(answer.body, 'username');
    return { id, name: typeof name === 'string' && name !== '' ? name : id };
  }

  /** Discord's limits: five message writes per five seconds in a channel, 50 requests a second per bot. */
  private paced(method: string, target: MessageRef, { draft }: WriteOptions) {
    const limits = [
      { key: `discord:channel:${channelOf(target)}`, perMinute: 60, burst: 5 },
      { key: botKey(this.platform, this.options.token), perMinute: 3_000, burst: 50 },
    ];
    return paced(this.options.pace, this.platform, method, limits, draft === true);
  }

  private request(
    method: string,
    verb: NonNullable<PlatformRequest['verb']>,
    path: string,
    json?: object,
    { draft }: WriteOptions = {},
  ) {
    return this.http.call({
      once: draft === true,
      method,
      verb,
      url: `${this.baseUrl}${path}`,
      headers: {
        authorization: `Bot ${this.options.token}`,
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
  }
}

/** The fields of a Discord message object that a thread parent needs. */
interface DiscordMessage {
  id: string;
  content: string;
  timestamp: string;
  author: { id: string; username: string; global_name?: string | null };
}

/** Messages in a thread live in the thread's channel. */
function channelOf(target: { channelId: string; threadId?: string }): string {
  return target.threadId ?? target.channelId;
}

function reactionPath(message: MessageRef, reaction: Reaction): string {
  const emoji = encodeURIComponent(UNICODE_REACTIONS[reaction]);
  return `/channels/${channelOf(message)}/messages/${message.messageId}/reactions/${emoji}/@me`;
}

/** Discord writes `+00:00` and microseconds; ThreadParent carries the usual `…Z` form when it parses. */
