export type { ForwardedChannel } from './channel-directory.js';
export { DEFAULT_DELIVERY, type DeliveryOptions } from './delivery-queue.js';
export { FORWARD_PATH, FORWARDED_SCHEMA } from './forwarded-body.js';
export { type Forwarder, type ForwarderOptions, startForwarder } from './forwarder.js';
export { GATEWAY_INTENTS, GatewayFatalError } from './gateway-connection.js';
export { runDiscordForwarder } from './run.js';
