/** A reply or notice committed with its batch and waiting in the thread's outbox. */
export interface PendingReply {
  id: string;
  /** What the turn handler wrote at commit time (opaque here). */
  payload: string;
  /** When it entered the outbox (Redis clock, ms): the retry horizon counts from here. */
  at: number;
  /** Failed delivery attempts so far (a dead reply's count includes the attempt that gave it up). */
  attempts: number;
  lastError?: string;
}

/** The head of a thread's outbox, locked to one deliverer, with the parts of it already posted. */
export interface TakenReply {
  reply: PendingReply;
  /** Part number → the platform's message id, of the parts posted by earlier attempts or a stream. */
  posted: Map<number, string>;
}

/** A taken reply as the scripts answer it: its JSON, and its parts record's HGETALL (flat pairs). */
export function takenReply(json: string, parts: readonly string[] | string): TakenReply {
  // cjson writes an empty table as an object: no parts.
  const flat = typeof parts === 'string' ? (JSON.parse(parts) as string[] | Record<string, never>) : parts;
  const posted = new Map<number, string>();
  if (Array.isArray(flat))
    for (let i = 0; i + 1 < flat.length; i += 2) posted.set(Number(flat[i]), flat[i + 1]!);
  return { reply: JSON.parse(json) as PendingReply, posted };
}
