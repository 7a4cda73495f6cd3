import { REST } from '@discordjs/rest';
import {
  type CreateWebSocketManagerOptions,
  type SessionInfo,
  WebSocketManager,
  WebSocketShardEvents,
} from '@discordjs/ws';
import type { ForwarderConfig } from '@tributary/config';
import {
  type APIGatewayBotInfo,
  type APIUser,
  GatewayCloseCodes,
  type GatewayDispatchPayload,
  GatewayIntentBits,
} from 'discord-api-types/v10';
import type { Logger } from 'pino';

export const GATEWAY_INTENTS =
  GatewayIntentBits.Guilds |
  GatewayIntentBits.GuildMessages |
  GatewayIntentBits.MessageContent |
  GatewayIntentBits.DirectMessages;

/** Close codes after which the library stops for good; each with what the operator has to fix. */
const FATAL_CLOSES: ReadonlyMap<number, string> = new Map([
  [GatewayCloseCodes.AuthenticationFailed, 'authentication failed: check DISCORD_BOT_TOKEN'],
  [GatewayCloseCodes.InvalidShard, 'invalid shard'],
  [GatewayCloseCodes.ShardingRequired, 'sharding required: the bot is in too many guilds for one connection'],
  [GatewayCloseCodes.InvalidAPIVersion, 'invalid Gateway API version'],
  [GatewayCloseCodes.InvalidIntents, 'invalid intents'],
  [
    GatewayCloseCodes.DisallowedIntents,
    'disallowed intents: enable the Message Content intent for this bot in the Discord Developer Portal',
  ],
]);

/** The Gateway refused us in a way no reconnect can fix. */
export class GatewayFatalError extends Error {
  constructor(
    readonly closeCode: number,
    hint: string,
  ) {
    super(`Discord Gateway closed the connection with code ${closeCode}: ${hint}`);
    this.name = 'GatewayFatalError';
  }
}

export interface GatewayHandlers {
  onReady(user: APIUser): void;
  /** The session is up (ready or resumed), or closed and being reconnected by the library. */
  onConnected(connected: boolean): void;
  onDispatch(payload: GatewayDispatchPayload): void;
  /** The connection is gone for good (see GatewayFatalError), or could not be set up at all. */
  onFatal(error: Error): void;
}

export interface GatewayConnection {
  destroy(): Promise<void>;
}

/** Connects in the background; everything that happens afterwards arrives through `handlers`. */
export function connectGateway(
  config: Readonly<ForwarderConfig>,
  logger: Logger,
  handlers: GatewayHandlers,
): GatewayConnection {
  const rest = new REST(config.apiUrl === undefined ? {} : { api: config.apiUrl }).setToken(config.token);
  const sessions = new Map<number, SessionInfo>();
  const options: CreateWebSocketManagerOptions = {
    token: config.token,
    intents: GATEWAY_INTENTS,
    rest,
    // Per connection rather than the library's process-wide default, so two forwarders never share a session.
    retrieveSessionInfo: (shardId) => sessions.get(shardId) ?? null,
    updateSessionInfo: (shardId, info) => {
      if (info) sessions.set(shardId, info);
      else sessions.delete(shardId);
    },
  };
  const manager =
    config.gatewayUrl === undefined
      ? new WebSocketManager(options)
      : pinnedManager(options, config.gatewayUrl);
  let destroyed = false;

  manager.on(WebSocketShardEvents.Ready, (data, shardId) => {
    logger.info({ shardId, botUserId: data.user.id, guilds: data.guilds.length }, 'gateway session ready');
    handlers.onReady(data.user);
    handlers.onConnected(true);
  });
  manager.on(WebSocketShardEvents.Resumed, (shardId) => {
    logger.info({ shardId }, 'gateway session resumed');
    handlers.onConnected(true);
  });
  manager.on(WebSocketShardEvents.Dispatch, (payload) => handlers.onDispatch(payload));
  manager.on(WebSocketShardEvents.Closed, (code, shardId) => {
    handlers.onConnected(false);
    const hint = FATAL_CLOSES.get(code);
    if (destroyed) logger.debug({ shardId, code }, 'gateway connection closed');
    else if (hint !== undefined) handlers.onFatal(new GatewayFatalError(code, hint));
    else logger.warn({ shardId, code }, 'gateway connection closed; the library reconnects');
  });
  manager.on(WebSocketShardEvents.Error, (error, shardId) =>
    logger.error({ shardId, err: error }, 'gateway error'),
  );
  manager.on(WebSocketShardEvents.SocketError, (error, shardId) =>
    logger.warn({ shardId, err: error }, 'gateway socket error'),
  );
  manager.on(WebSocketShardEvents.Debug, (message, shardId) => logger.debug({ shardId }, message));

  manager.connect().catch((error: unknown) => {
    if (!destroyed) handlers.onFatal(error instanceof Error ? error : new Error(String(error)));
  });

  return {
    async destroy() {
      destroyed = true;
      await manager.destroy({ reason: 'forwarder shutting down' });
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    },
  };
}

/** A manager that skips GET /gateway/bot and always connects to `url` with one shard. */
function pinnedManager(options: CreateWebSocketManagerOptions, url: string): WebSocketManager {
  const info: APIGatewayBotInfo = {
    url,
    shards: 1,
    session_start_limit: { total: 1, remaining: 1, reset_after: 0, max_concurrency: 1 },
  };
  return new (class extends WebSocketManager {
    override async fetchGatewayInformation(): Promise<APIGatewayBotInfo> {
      return info;
    }
  })(options);
}
