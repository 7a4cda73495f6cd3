import type { ForwarderConfig } from '@tributary/config';
import type { DiscordForwardedDispatch } from '@tributary/platforms';
import { GatewayDispatchEvents } from 'discord-api-types/v10';
import type { Logger } from 'pino';
import { ChannelDirectory } from './channel-directory.js';
import { DEFAULT_DELIVERY, type DeliveryOptions, DeliveryQueue } from './delivery-queue.js';
import { FORWARD_PATH, type ForwardedMessage, forwardedBody } from './forwarded-body.js';
import { connectGateway } from './gateway-connection.js';

export interface ForwarderOptions {
  logger: Logger;
  delivery?: Partial<DeliveryOptions>;
  /** How long close() keeps delivering what is queued. */
  shutdownGraceMs?: number;
  /** Channels remembered for thread parents and types. */
  channelCacheSize?: number;
}

export interface Forwarder {
  /** Leaves the Gateway, then delivers what is queued within the grace period. Idempotent. */
  close(): Promise<void>;
  /** Settles only if the Gateway connection is lost for good (bad token, disallowed intents, …). */
  readonly failure: Promise<Error>;
  /** Whether the Gateway session is up: readiness. */
  connected(): boolean;
}

/** Holds the Gateway connection and forwards every channel message to ingress; never waits on agent work. */
export function startForwarder(config: Readonly<ForwarderConfig>, options: ForwarderOptions): Forwarder {
  const { logger } = options;
  const endpoint = `${config.forwardUrl.replace(/\/+$/, '')}${FORWARD_PATH}`;
  const channels = new ChannelDirectory(options.channelCacheSize ?? 10_000);
  const queue = new DeliveryQueue(
    endpoint,
    config.secret,
    { ...DEFAULT_DELIVERY, ...options.delivery },
    logger,
  );
  let botUserId: string | undefined;
  let connected = false;
  let reportFailure: (error: Error) => void = () => {};
  const failure = new Promise<Error>((resolve) => {
    reportFailure = resolve;
  });

  logger.info(
    { endpoint: new URL(endpoint).origin, pinnedGateway: config.gatewayUrl !== undefined },
    'starting',
  );
  const gateway = connectGateway(config, logger, {
    onReady(user) {
      botUserId = user.id;
    },
    onConnected(up) {
      connected = up;
    },
    onDispatch(payload) {
      channels.observe(payload);
      // Edits and deletes go down the same channel lane as the messages they change, so after them.
      const forward = (dispatch: DiscordForwardedDispatch, message: ForwardedMessage) => {
        const body = forwardedBody(dispatch, message, channels.describe(message.channel_id));
        queue.enqueue({ channelId: message.channel_id, messageId: message.id, body });
      };
      switch (payload.t) {
        case GatewayDispatchEvents.MessageCreate:
        case GatewayDispatchEvents.MessageUpdate:
          // Our own replies (and their streamed edits) come back over the Gateway; forwarding them
          // would feed the agent its own output.
          if (payload.d.author.id === botUserId) return;
          forward(payload.t, payload.d);
          return;
        case GatewayDispatchEvents.MessageDelete:
          forward(payload.t, payload.d);
          return;
      }
    },
    onFatal(error) {
      logger.fatal({ err: error }, 'gateway connection lost for good');
      reportFailure(error);
    },
  });

  let closing: Promise<void> | undefined;
  return {
    failure,
    connected: () => connected,
    close() {
      closing ??= (async () => {
        await gateway.destroy();
        const abandoned = await queue.close(options.shutdownGraceMs ?? 10_000);
        logger.info({ abandoned }, 'forwarder stopped');
      })();
      return closing;
    },
  };
}
