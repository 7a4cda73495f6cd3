export * from './approval-buttons.js';
export {
  FAILED_AUTH_PER_MINUTE,
  type FailedAuthBudget,
  failedAuthBudget,
  type OverBudget,
} from './failed-auth-budget.js';
export { FileFetchError, type FileFetchFailure } from './files/file-fetch-error.js';
export {
  type DownloadLimits,
  type FetchedFile,
  fileTooLarge,
  formatBytes,
} from './files/guarded-download.js';
export { gatewayCommandBody } from './gateway/reply-body.js';
export * from './hmac-signature.js';
export * from './inbound.js';
export * from './inbound-adapters.js';
export { type MessageRef, messageRefOf, type StreamRecipient, streamRecipientOf } from './message-ref.js';
export { OrderedByKey } from './ordered-by-key.js';
export * from './outbound.js';
export * from './outbound-clients.js';
export * from './platform-clients.js';
export * from './platform-defaults.js';
export * from './thread-commands.js';
export * from './thread-route.js';
export { UNICODE_REACTIONS } from './unicode-reactions.js';
export { sameSecret } from './webhook-checks.js';
