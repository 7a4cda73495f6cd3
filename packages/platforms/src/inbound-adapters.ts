export { DiscordForwardedAdapter, type DiscordForwardedOptions } from './discord/forwarded.js';
export {
  DISCORD_FORWARDED_SCHEMA,
  type DiscordForwardedBody,
  type DiscordForwardedDispatch,
  type DiscordGatewayMessage,
} from './discord/forwarded-schema.js';
export {
  DISCORD_SIGNATURE_HEADER,
  DISCORD_TIMESTAMP_HEADER,
  DiscordInteractionsAdapter,
  type DiscordInteractionsOptions,
} from './discord/interactions.js';
export {
  GATEWAY_EVENT_SCHEMA,
  type GatewayAttachment,
  type GatewayEvent,
  parseGatewayEvent,
} from './gateway/event-schema.js';
export { GatewayInboundAdapter, type GatewayInboundOptions } from './gateway/inbound.js';
export { SlackCommandsAdapter } from './slack/commands.js';
export { SlackInboundAdapter, type SlackInboundOptions } from './slack/inbound.js';
export { SlackInteractivityAdapter } from './slack/interactivity.js';
export type { SlackSelf } from './slack/message-event.js';
export { SLACK_SIGNATURE_HEADER, SLACK_TIMESTAMP_HEADER, slackSignature } from './slack/signature.js';
export type { SlackFormOptions } from './slack/signed-form.js';
export {
  TELEGRAM_SECRET_HEADER,
  TELEGRAM_UPDATES,
  TelegramInboundAdapter,
  type TelegramInboundOptions,
} from './telegram/inbound.js';
export { TELEGRAM_MAIN_THREAD } from './telegram/message.js';
export { REPLAY_WINDOW_SECONDS } from './webhook-checks.js';
