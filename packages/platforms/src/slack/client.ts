import type { ArrivalEvent } from '@tributary/packing';
import { type ApprovalPrompt, approvalButton, isRefusal } from '../approval-buttons.js';
import { FileFetchError } from '../files/file-fetch-error.js';
import {
  type DownloadLimits,
  type FetchedFile,
  guardedDownload,
  operatorChosen,
} from '../files/guarded-download.js';
import { type SlackMentions, toSlackMrkdwn, toSlackStreamMarkdown } from '../format/slack-mrkdwn.js';
import { objectField } from '../http/answer.js';
import { requireId } from '../http/answer-id.js';
import { paced } from '../http/paced.js';
import { type PlatformHttp, type TokenClientOptions, tokenClientHttp } from '../http/platform-http.js';
import type { MessageRef, StreamRecipient } from '../message-ref.js';
import {
  type BotIdentity,
  type NativeStreaming,
  PlatformApiError,
  type PlatformClient,
  type Reaction,
  type SendOptions,
  type ThreadParent,
  type UserNames,
  type WriteOptions,
} from '../outbound.js';
import { SLACK_API_URL } from '../platform-defaults.js';
import { isoFromSlackTs } from '../platform-time.js';
import { isEventItself } from '../thread-parent.js';
import { classifySlackAnswer } from './answer.js';
import { SLACK_REACTIONS } from './reactions.js';

/** Where `url_private` points. */
export const SLACK_FILES_URL = 'https://files.slack.com';

export interface SlackClientOptions extends TokenClientOptions {
  /** The only origin files are downloaded from; a fake file host in tests. */
  filesUrl?: string;
  /** SLACK_REPLY_MENTIONS: whether the agent's `<!channel>`, `<@U…>` and the like stay live. */
  mentions?: SlackMentions;
  /** SLACK_CHANNEL_POSTS_PER_MINUTE: Slack's per-channel posting limit, 60 unless Slack granted more. */
  channelPostsPerMinute?: number;
  /**
   * SLACK_REPLY_STREAMING: `native` streams replies with chat.startStream where the workspace allows it
   * (edits where it does not), `edits` always edits.
   */
  replyStreaming?: 'native' | 'edits';
  /** Told once per workspace that refuses native streaming, with Slack's reason; edits are used after. */
  onStreamingRefused?: (reason: string) => void;
  /**
   * SLACK_TEAM_TOKENS_DIR: the bot token of each team (by team id) the deployment answers with a token
   * of its own (docs/adr/0061); `token` answers every other team, and may be empty where there is none.
   */
  teamTokens?: ReadonlyMap<string, string>;
}

/**
 * Slack Web API: messages by `ts`, threads by the root's `ts`. Each call is made with the token of the
 * workspace it concerns (MessageRef.workspaceId).
 */
export class SlackClient implements PlatformClient {
  readonly platform = 'slack';
  /** Slack accepts far longer texts but advises 4,000 characters per message for readability. */
  readonly maxMessageLength = 4000;
  private readonly http: PlatformHttp;
  private readonly baseUrl: string;
  readonly streaming: NativeStreaming | undefined;
  /** Workspaces (by team id) where Slack refused a stream for a reason of the workspace's. */
  private readonly streamingRefused = new Set<string>();

  constructor(private readonly options: SlackClientOptions) {
    this.streaming = options.replyStreaming === 'edits' ? undefined : this.nativeStreaming();
    ({ baseUrl: this.baseUrl, http: this.http } = tokenClientHttp(
      options,
      {
        platform: this.platform,
        classify: classifySlackAnswer,
        authHint: "check SLACK_BOT_TOKEN, the app's scopes and that it is in the channel",
        defaultBaseUrl: SLACK_API_URL,
      },
      options.teamTokens?.values(),
    ));
  }

  render(markdown: string): string {
    return toSlackMrkdwn(markdown, this.options.mentions);
  }

  async send(target: MessageRef, markdown: string, options: SendOptions = {}): Promise<string> {
    return this.postIn(target, markdown, options, {});
  }

  /** Block Kit: the request as a section, a button per option (green grants, red refusals). */
  async askApproval(target: MessageRef, prompt: ApprovalPrompt): Promise<string> {
    const buttons = prompt.options.map((option, index) => ({
      type: 'button',
      action_id: `approval_${index}`,
      text: { type: 'plain_text', text: option.name.slice(0, 75) },
      value: approvalButton(prompt.id, index),
      style: isRefusal(option.kind) ? 'danger' : 'primary',
    }));
    return this.postIn(
      target,
      prompt.text,
      {},
      {
        blocks: [
          section(this.render(prompt.text)),
          { type: 'actions', block_id: 'tributary_approval', elements: buttons },
        ],
      },
    );
  }

  /** The section alone: chat.update keeps a message's blocks unless it is given others. */
  async settleApproval(target: MessageRef, messageId: string, markdown: string): Promise<void> {
    const text = this.render(markdown);
    await this.paced('chat.update', target, {});
    await this.post(target, 'chat.update', {
      channel: target.channelId,
      ts: messageId,
      text,
      blocks: [section(text)],
    });
  }

  /** chat.postEphemeral: shown to `userId` alone, in the thread. */
  async whisper(target: MessageRef, userId: string, markdown: string): Promise<void> {
    await this.post(target, 'chat.postEphemeral', {
      channel: target.channelId,
      user: userId,
      text: this.render(markdown),
      ...(target.threadId === undefined ? {} : { thread_ts: target.threadId }),
    });
  }

  private async postIn(
    target: MessageRef,
    markdown: string,
    options: SendOptions,
    extra: Record<string, unknown>,
  ): Promise<string> {
    const method = 'chat.postMessage';
    const args = {
      channel: target.channelId,
      // A reply to a message outside any thread starts a thread under it.
      thread_ts: target.threadId ?? target.messageId,
      text: this.render(markdown),
      ...extra,
    };
    await this.paced(method, target, options);
    const answer = await this.post(target, method, args, options);
    return requireId(this.platform, method, answer, objectField(answer.body, 'ts'));
  }

  async edit(
    target: MessageRef,
    messageId: string,
    markdown: string,
    options: WriteOptions = {},
  ): Promise<void> {
    await this.paced('chat.update', target, options);
    // A natively streamed message is made of blocks, which chat.update keeps unless it is given others:
    // an empty list replaces them with the text.
    const update = () =>
      this.post(
        target,
        'chat.update',
        { channel: target.channelId, ts: messageId, text: this.render(markdown), blocks: [] },
        options,
      );
    try {
      await update();
    } catch (error) {
      // A stream its worker never stopped (it died mid-reply) takes no update until it is stopped.
      if (!(error instanceof PlatformApiError) || error.code !== 'cant_update_message' || !this.streaming) {
        throw error;
      }
      await this.streaming.stop(target, messageId).catch(() => undefined);
      await update();
    }
  }

  /**
   * chat.startStream, chat.appendStream and chat.stopStream: Slack renders the Markdown itself and shows
   * the message as written while it grows. Slack needs the person the stream is for outside a direct
   * message; a stream whose recipient has no workspace id is not started. A refusal that is the
   * workspace's (a method it lacks, a scope, a token type) turns streaming off for this client; any
   * other failure is thrown, and the caller edits instead for that reply.
   */
  private nativeStreaming(): NativeStreaming {
    const draft = { draft: true };
    const markdownText = (markdown: string) => toSlackStreamMarkdown(markdown, this.options.mentions);
    return {
      start: async (target: MessageRef, recipient: StreamRecipient, markdown: string) => {
        const workspace = recipient.workspaceId;
        if (workspace === undefined || this.streamingRefused.has(workspace)) return undefined;
        const method = 'chat.startStream';
        await this.paced(method, target, draft);
        try {
          const answer = await this.post(
            target,
            method,
            {
              channel: target.channelId,
              thread_ts: target.threadId ?? target.messageId,
              recipient_user_id: recipient.userId,
              recipient_team_id: workspace,
              markdown_text: markdownText(markdown),
            },
            draft,
          );
          return requireId(this.platform, method, answer, objectField(answer.body, 'ts'));
        } catch (error) {
          if (!isWorkspaceRefusal(error)) throw error;
          this.streamingRefused.add(workspace);
          this.options.onStreamingRefused?.(error.message);
          return undefined;
        }
      },
      append: async (target: MessageRef, messageId: string, markdown: string) => {
        await this.paced('chat.appendStream', target, draft);
        await this.post(
          target,
          'chat.appendStream',
          { channel: target.channelId, ts: messageId, markdown_text: markdownText(markdown) },
          draft,
        );
      },
      stop: async (target: MessageRef, messageId: string) => {
        await this.post(target, 'chat.stopStream', { channel: target.channelId, ts: messageId }, draft);
      },
    };
  }

  /** chat.update is a Tier 3 method: about 50 calls a minute per workspace. */
  editIntervalMs(): number {
    return 1_200;
  }

  async react(message: MessageRef, reaction: Reaction): Promise<void> {
    await this.post(message, 'reactions.add', reactionBody(message, reaction));
  }

  async unreact(message: MessageRef, reaction: Reaction): Promise<void> {
    await this.post(message, 'reactions.remove', reactionBody(message, reaction));
  }

  async fetchThreadParent(event: ArrivalEvent): Promise<ThreadParent | undefined> {
    if (event.threadId === undefined) return undefined;
    let body: unknown;
    try {
      ({ body } = await this.read(event, 'conversations.replies', {
        channel: event.channelId,
        ts: event.threadId,
        limit: '1',
      }));
    } catch (error) {
      if (error instanceof PlatformApiError && error.code === 'thread_not_found') return undefined;
      throw error;
    }
    const root = (objectField(body, 'messages') as SlackMessage[] | undefined)?.[0];
    if (root?.ts === undefined) return undefined;
    const parent: ThreadParent = {
      messageId: root.ts,
      senderId: root.user ?? root.bot_id ?? '',
      senderName: root.username ?? root.user ?? root.bot_id ?? '',
      text: root.text ?? '',
      timestamp: isoFromSlackTs(root.ts, 'ts'),
    };
    return isEventItself(parent, event) ? undefined : parent;
  }

  /** `url_private` needs the bot token (scope files:read) and is only fetched from Slack's file host. */
  async fetchFile(ref: string, limits: DownloadLimits, workspaceId?: string): Promise<FetchedFile> {
    if (!URL.canParse(ref)) throw new FileFetchError('refused', 'the file has no URL');
    return guardedDownload({
      url: new URL(ref),
      allowedOrigins: [this.options.filesUrl ?? SLACK_FILES_URL],
      configuredOrigins: operatorChosen(this.options.filesUrl, [SLACK_FILES_URL]),
      headers: this.auth('file', { workspaceId }),
      ...limits,
    });
  }

  async whoAmI(workspaceId?: string): Promise<BotIdentity> {
    const { body } = await this.post({ workspaceId }, 'auth.test', {});
    const id = objectField(body, 'user_id');
    const name = objectField(body, 'user');
    const team = objectField(body, 'team_id');
    if (typeof id !== 'string' || typeof name !== 'string') {
      throw new PlatformApiError(this.platform, 'auth.test', 200, 'the answer names no user_id');
    }
    return { id, name, ...(typeof team === 'string' ? { workspaceId: team } : {}) };
  }

  /** Needs the users:read scope. */
  async userNames(userId: string, workspaceId?: string): Promise<UserNames> {
    const { body } = await this.read({ workspaceId }, 'users.info', { user: userId });
    const user = objectField(body, 'user') as SlackUser | undefined;
    // `||`: Slack sends '' for names a user never set.
    const name = user?.name || userId;
    const displayName = user?.profile?.display_name || user?.profile?.real_name || user?.real_name || name;
    return { name, displayName };
  }

  /** usergroups.users.list per group (scope usergroups:read); a group Slack does not know fails the check. */
  async memberOf(target: MessageRef, userId: string, groups: readonly string[]): Promise<string[]> {
    const found: string[] = [];
    for (const group of groups) {
      const { body } = await this.read(target, 'usergroups.users.list', { usergroup: group });
      const users = objectField(body, 'users');
      if (Array.isArray(users) && users.includes(userId)) found.push(group);
    }
    return found;
  }

  /** Slack allows about one message a second in a channel, with short bursts. */
  private paced(method: string, target: MessageRef, { draft }: WriteOptions) {
    const perMinute = this.options.channelPostsPerMinute ?? 60;
    const limits = [{ key: `slack:channel:${target.channelId}`, perMinute, burst: 3 }];
    return paced(this.options.pace, this.platform, method, limits, draft === true);
  }

  private post(
    where: InWorkspace,
    method: string,
    args: Record<string, unknown>,
    { draft }: WriteOptions = {},
  ) {
    return this.http.call({
      method,
      url: `${this.baseUrl}/${method}`,
      headers: { ...this.auth(method, where), 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(args),
      once: draft === true,
    });
  }

  /** Read methods take their arguments as a query: Slack does not accept JSON bodies for them. */
  private read(where: InWorkspace, method: string, args: Record<string, string>) {
    const query = new URLSearchParams(args);
    return this.http.call({
      method,
      verb: 'GET',
      url: `${this.baseUrl}/${method}?${query}`,
      headers: this.auth(method, where),
    });
  }

  /** The workspace's own token, else the deployment's; a workspace with neither is an error that says so. */
  private auth(method: string, { workspaceId }: InWorkspace) {
    const token =
      (workspaceId === undefined ? undefined : this.options.teamTokens?.get(workspaceId)) ||
      this.options.token;
    if (!token) {
      throw new PlatformApiError(
        this.platform,
        method,
        0,
        `no bot token answers team ${workspaceId ?? '(unnamed)'}: add one to SLACK_TEAM_TOKENS_DIR, or set SLACK_BOT_TOKEN`,
        'no_team_token',
      );
    }
    return { authorization: `Bearer ${token}` };
  }
}

/** What picks a call's token: the workspace it concerns, if any is named. */
interface InWorkspace {
  workspaceId?: string | undefined;
}

/**
 * Slack's answers to a stream that mean this workspace or app cannot stream at all: retrying elsewhere
 * in it would only fail the same way.
 */
const WORKSPACE_REFUSALS = new Set([
  'unknown_method',
  'not_allowed_token_type',
  'missing_scope',
  'feature_not_enabled',
  'team_not_allowed',
  'method_deprecated',
]);

function isWorkspaceRefusal(error: unknown): error is PlatformApiError {
  return error instanceof PlatformApiError && WORKSPACE_REFUSALS.has(error.code ?? '');
}

/** The fields of a message in `conversations.replies` that a thread parent needs. */
interface SlackMessage {
  ts?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  text?: string;
}

/** The fields of a `users.info` user that name them. */
interface SlackUser {
  name?: string;
  real_name?: string;
  profile?: { display_name?: string; real_name?: string };
}

function reactionBody(message: MessageRef, reaction: Reaction) {
  return { channel: message.channelId, timestamp: message.messageId, name: SLACK_REACTIONS[reaction] };
}

function section(mrkdwn: string) {
  return { type: 'section', text: { type: 'mrkdwn', text: mrkdwn.slice(0, 3000) } };
}
