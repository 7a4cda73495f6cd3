export type {
  ArrivalEvent,
  Attachment,
  AttachmentSource,
  AudioAttachment,
  ImageAttachment,
  LinkAttachment,
  Sender,
  TextAttachment,
} from './arrival-event.js';
export { attachmentUri } from './attachment-uri.js';
export {
  buildHistoryBlock,
  DEFAULT_HISTORY_TOKENS,
  HISTORY_MIME_TYPE,
  HISTORY_SCHEMA,
  type HistoryBlock,
  type HistoryBlockOptions,
  type HistoryTurn,
  historyUri,
  isHistoryBlock,
} from './history-block.js';
export { InvalidArrivalEventError } from './invalid-arrival-event-error.js';
export { packBatch } from './pack-batch.js';
export { buildParentBlock, PARENT_SCHEMA, parentUri, type ThreadParentMessage } from './parent-block.js';
export { parseArrivalEvent } from './parse-arrival-event.js';
export { arrivalFromBody, type QueuedArrival, queuedArrival } from './queued-arrival.js';
export {
  parseSenderContextBlockText,
  SENDER_CONTEXT_SCHEMA,
  type SenderContext,
  senderContext,
  senderContextBlockText,
} from './sender-context.js';
export { countTokens, envelopeTokens, eventTokens, NON_TEXT_BLOCK_TOKENS } from './token-count.js';
export { type UnpackedEvent, unpackBatch } from './unpack-batch.js';
