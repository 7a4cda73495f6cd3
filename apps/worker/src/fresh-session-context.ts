import type { AgentInfo, ContentBlock } from '@tributary/acp';
import { buildParentBlock, DEFAULT_HISTORY_TOKENS } from '@tributary/packing';
import type { BatchRecord, StoredThreadParent } from '@tributary/queue';
import { historySeed } from './history-seed.js';

export interface FreshSessionSources {
  /** The thread's batch records, newest first. */
  history: (thread: string) => Promise<BatchRecord[]>;
  /** The message the thread started from, when ingress recorded one. */
  parent: (thread: string) => Promise<StoredThreadParent | undefined>;
  /** Token budget of the restored history; default DEFAULT_HISTORY_TOKENS. */
  historyTokens?: number;
}

/**
 * The broker-origin blocks that open a fresh session's first prompt, before the packed batch: the
 * thread's parent message, then the history of its complete batches. Both are best effort: a parent
 * that could not be read leaves the prompt without it, never without the batch.
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
  const seed = historySeed(thread, records, caps, sources.historyTokens ?? DEFAULT_HISTORY_TOKENS);
  return {
    blocks: [...(parent ? [buildParentBlock(thread, parent, caps)] : []), ...(seed ? [seed.block] : [])],
    historyTurns: seed?.turns ?? 0,
  };
}
