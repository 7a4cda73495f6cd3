export { DiscordClient, type DiscordClientOptions } from './discord/client.js';
export { GatewayClient, type GatewayClientOptions } from './gateway/client.js';
export { GATEWAY_REPLY_SCHEMA } from './gateway/reply-body.js';
export { classifyHttpAnswer, readAnswer, type Verdict } from './http/answer.js';
export type { OnPlatformCall, PlatformClientOptions } from './http/platform-http.js';
export { DEFAULT_RETRY_POLICY, type Failure, nextStep, type RetryPolicy } from './http/retry-policy.js';
export { SlackClient, type SlackClientOptions } from './slack/client.js';
export { cutToParts, splitMessage } from './split-message.js';
export { TelegramClient, type TelegramClientOptions } from './telegram/client.js';
