export type {
  ArrivalEvent,
  Attachment,
  AudioAttachment,
  ImageAttachment,
  LinkAttachment,
  Sender,
  TextAttachment,
} from './arrival-event.js';
export { attachmentUri } from './attachment-uri.js';
export { InvalidArrivalEventError } from './invalid-arrival-event-error.js';
export { packBatch } from './pack-batch.js';
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
