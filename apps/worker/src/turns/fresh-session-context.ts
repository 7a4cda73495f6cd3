import type { AgentInfo, ContentBlock } from '@tributary/acp';
import { buildParentBlock, DEFAULT_HISTORY_TOKENS, type ThreadParentMessage } from '@tributary/packing';
import type { BatchRecord } from '@tributary/queue';
import { historySeed } from './history-seed.js';

export interface FreshSessionSources {
  /** The thread's batch records, newest first. */
  history: (thread: string) => Promise<BatchRecord[]>;
  /** The message the thread started from, when ingress recorded one. */
  parent: (thread: string) => Promise<ThreadParentMessage | undefined>;
}

/**
 * The broker-origin blocks that open a fresh session's first prompt, before the packed batch: the
 * thread's parent message, then the history of its complete batches. A parent that cannot be read
 * leaves the prompt without it; a history that cannot be read fails the turn (retried), since a
 * session answered without its history would be saved as if it had it.
 */
export async function freshSessionContext(
  thread: string,
  sources: FreshSessionSources,
  caps: AgentInfo['promptCapabilities'],
): Promise<{ blocks: ContentBlock[]; historyTurns: number }> {
  const [parent, records] = await Promise.all([
    sources.parent(thread).catch(() => undefined),
    sources.history(thread),
  ]);
  const seed = historySeed(thread, records, caps, DEFAULT_HISTORY_TOKENS);
  return {
    blocks: [...(parent ? [buildParentBlock(thread, parent, caps)] : []), ...(seed ? [seed.block] : [])],
    historyTurns: seed?.turns ?? 0,
  };
}
