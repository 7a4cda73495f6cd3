import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { CallLog } from './call-log.js';
import { discordHandler } from './discord.js';
import { FailureQueue } from './failures.js';
import { FileStore } from './file-store.js';
import { gatewayHandler } from './gateway.js';
import type { FakeAnswer, FakePlatformHandler, FakeRequest } from './handler.js';
import { MessageStore } from './message-store.js';
import { slackHandler } from './slack.js';
import { telegramHandler } from './telegram.js';
import {
  FAKE_SLACK_TEAM,
  type FakeBots,
  type FakeDirectory,
  type FakePlatform,
  type FakePlatformApi,
  type FakePlatformApiOptions,
  type FakeTokens,
} from './types.js';

const DEFAULT_TOKENS: FakeTokens = {
  slack: 'xoxb-fake-slack-token',
  telegram: '123456:fake-telegram-token',
  discord: 'fake-discord-token',
};

const DEFAULT_BOTS: FakeBots = {
  slack: { userId: 'UFAKEBOT', name: 'fake-bot' },
  telegram: { username: 'fake_bot' },
  discord: { id: '1000000000000000001', username: 'fake-bot' },
};

/** Longest a `/_calls` long poll is held open. */
const MAX_POLL_MS = 60_000;

/** The URL prefix of each platform; the rest of the path is the platform's own. */
const PREFIXES: [string, FakePlatform][] = [
  ['/slack/api', 'slack'],
  ['/telegram', 'telegram'],
  ['/discord/api/v10', 'discord'],
  ['/gateway', 'gateway'],
];

/**
 * Real HTTP on 127.0.0.1 (a free port) answering like Slack, Telegram, Discord and an openab gateway,
 * recording every call. Point the `*_API_URL` / `GATEWAY_REPLY_URL` settings at `urls`.
 */
export async function startFakePlatformApi(options: FakePlatformApiOptions = {}): Promise<FakePlatformApi> {
  const tokens = { ...DEFAULT_TOKENS, ...options.tokens };
  const log = new CallLog();
  const failures = new FailureQueue();
  const stores = { slack: new MessageStore(), discord: new MessageStore() };
  const bots = { ...DEFAULT_BOTS, ...options.bots };
  let origin = '';
  const slackTeams = options.slackTeams ?? [];
  const files = new FileStore(() => origin, {
    slack: new Map([
      [FAKE_SLACK_TEAM, tokens.slack],
      ...slackTeams.map((team) => [team.id, team.token] as const),
    ]),
    telegram: tokens.telegram,
  });
  const directory: FakeDirectory = {
    slackUsers: new Map(),
    slackUserGroups: new Map(),
    telegramMembers: new Map(),
  };
  const handlers: Record<FakePlatform, FakePlatformHandler> = {
    slack: slackHandler(
      [{ id: FAKE_SLACK_TEAM, token: tokens.slack, bot: bots.slack }, ...slackTeams],
      stores.slack,
      directory,
      options.slackChannelPostsPerMinute,
      options.slackNativeStreaming,
    ),
    telegram: telegramHandler(tokens.telegram, new MessageStore(), bots.telegram, files, directory),
    discord: discordHandler(tokens.discord, stores.discord, bots.discord),
    gateway: gatewayHandler(options.gatewaySecret),
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const at = performance.timeOrigin + performance.now();
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === '/_calls' && req.method === 'GET') {
      const since = Number(url.searchParams.get('since') ?? 0);
      const waitMs = Math.min(MAX_POLL_MS, Number(url.searchParams.get('waitMs') ?? 0));
      const calls = await log.after(since, waitMs);
      return send(res, { status: 200, body: { seq: log.lastSeq, calls } });
    }
    const file = files.serve(url.pathname, req.headers.authorization);
    if (file !== undefined) {
      log.record({
        platform: file.platform,
        method: 'file',
        ...(file.account === undefined ? {} : { account: file.account }),
        path: url.pathname.replace(/\/bot[^/]+\//, '/bot<token>/'),
        headers: recordedHeaders(req),
        body: undefined,
        status: file.status,
        at,
      });
      res.writeHead(file.status, file.bytes ? { 'content-type': file.contentType } : {});
      res.end(file.bytes);
      return;
    }
    const route = PREFIXES.find(([prefix]) => url.pathname.startsWith(`${prefix}/`));
    if (!route) return send(res, { status: 404, body: { error: `no fake platform at ${url.pathname}` } });
    const [prefix, platform] = route;
    const handler = handlers[platform];
    const raw = await readBody(req);
    const request: FakeRequest = {
      verb: req.method ?? 'GET',
      path: url.pathname.slice(prefix.length),
      query: url.searchParams,
      headers: req.headers,
      raw,
      payload: payloadOf(req, url, raw),
    };
    const method = handler.method(request);
    let answer: FakeAnswer;
    if (!handler.authorized(request)) answer = handler.unauthorized();
    else {
      const failure = failures.take(platform, method);
      answer = failure ? handler.failure(failure) : handler.handle(request, method);
    }
    const account = handler.account?.(request);
    log.record({
      platform,
      method,
      ...(account === undefined ? {} : { account }),
      path: handler.recordedPath(request),
      headers: recordedHeaders(req),
      body: request.payload,
      status: answer.status,
      answer: answer.body,
      at,
    });
    send(res, answer);
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => send(res, { status: 500, body: { error: String(error) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    urls: {
      slack: `${origin}/slack/api`,
      telegram: `${origin}/telegram`,
      discord: `${origin}/discord/api/v10`,
      gatewayReply: `${origin}/gateway/reply`,
    },
    tokens,
    bots,
    origin,
    calls: () => log.all(),
    waitForCalls: (predicate, waitOptions) => log.waitFor(predicate, waitOptions),
    failNext: (failure) => failures.add(failure),
    seedMessage: ({ platform, messageId, senderName, timestamp, ...message }) => {
      stores[platform].put({
        ...message,
        id: messageId,
        senderName: senderName ?? message.senderId,
        timestamp: timestamp ?? new Date().toISOString(),
      });
    },
    seedFile: (file) => files.add(file),
    message: (platform, channelId, messageId) => stores[platform].get(channelId, messageId),
    seedSlackUser: (user) => directory.slackUsers.set(user.id, user),
    seedSlackUserGroup: (groupId, userIds) => directory.slackUserGroups.set(groupId, userIds),
    seedTelegramMember: (chatId, userId, status) =>
      directory.telegramMembers.set(`${chatId}:${userId}`, status),
    close: async () => {
      log.release();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Clients keep connections alive; without this, close would wait for them to time out.
      server.closeAllConnections();
      await closed;
    },
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** JSON body, form fields, or the query of a body-less request; undefined when none can be read. */
function payloadOf(req: IncomingMessage, url: URL, raw: Buffer): Record<string, unknown> | undefined {
  const type = req.headers['content-type'] ?? '';
  if (raw.length === 0) return url.search === '' ? undefined : Object.fromEntries(url.searchParams);
  if (type.includes('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  }
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Headers as recorded: credentials keep their scheme and lose their value. */
function recordedHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    headers[name] = name === 'authorization' ? text.replace(/^(\S+\s+)?.*$/, '$1[redacted]') : text;
  }
  return headers;
}

function send(res: ServerResponse, answer: FakeAnswer): void {
  if (res.headersSent) return;
  const body = answer.body === undefined ? undefined : JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    ...answer.headers,
    ...(body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
  });
  res.end(body);
}
