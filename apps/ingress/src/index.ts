export {
  type BotIdentities,
  type BotSelf,
  discoverBotIdentities,
} from './bot-identities.js';
export { type IngressOptions, type RunningIngress, startIngress } from './ingress-service.js';
export { type WebhookDefinition, webhookDefinitions } from './webhook-definitions.js';
