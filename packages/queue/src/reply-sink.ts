import type { PostedPart } from './stores/reply-outbox.js';

/** One delivery attempt of a committed reply, as the runner hands it to the worker's sink. */
export interface ReplyAttempt {
  thread: string;
  id: string;
  /** What the turn handler committed: opaque here, the worker encodes and decodes it. */
  payload: string;
  /** Failed attempts before this one. */
  attempts: number;
  /** Part → platform message id of the parts posted already (an earlier attempt, a stream): edit them. */
  posted: ReadonlyMap<number, string>;
  /**
   * Records a part the platform just took, before the next part is posted: an attempt cut short then
   * edits it rather than posting it twice.
   */
  record(part: number, messageId: string): Promise<void>;
}

/**
 * Where the runner delivers the replies turns committed (the worker's platforms). A runner cannot be
 * built without one: a committed reply nobody delivers would sit in the outbox until it died.
 */
export interface ReplySink {
  /**
   * Delivers the reply or throws the platform's error (a `retryAfterMs` on it sets the next attempt).
   * Each part posted but the last is `record`ed first; the last one posted is returned instead, to be
   * recorded with the reply's done in one call.
   */
  deliver(attempt: ReplyAttempt): Promise<PostedPart | undefined>;
}
