export { buildApp, type IngressAppDeps, type MetricsSource } from './app.js';
export { ERROR_CATALOG, type ErrorCode, IngressError } from './errors.js';
export type { IngressObserver, RequestOutcome } from './ingress-observer.js';
export { type IngressOptions, type RunningIngress, startIngress } from './ingress-service.js';
export { prometheusObserver } from './prometheus-observer.js';
export { type WebhookDefinition, webhookDefinitions } from './webhook-definitions.js';
