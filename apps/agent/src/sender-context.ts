import type { ContentBlock } from '@agentclientprotocol/sdk';

/** The fields of one `<sender_context>` envelope, left untyped: the agent reads a few and needs none. */
export type SenderContext = Record<string, unknown>;

/** One arrival event of a batch: its envelope and the blocks that follow it up to the next envelope. */
export interface PromptMessage {
  /** Undefined for blocks that precede any envelope (a prompt not packed by Tributary). */
  sender: SenderContext | undefined;
  blocks: ContentBlock[];
}

const OPEN = '<sender_context>\n';
const CLOSE = '\n</sender_context>';

/** Returns the envelope when `block` is exactly a sender_context marker, else undefined. */
function parseSenderContext(block: ContentBlock): SenderContext | undefined {
  if (block.type !== 'text' || !block.text.startsWith(OPEN) || !block.text.endsWith(CLOSE)) {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(block.text.slice(OPEN.length, -CLOSE.length));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as SenderContext)
      : undefined;
  } catch {
    // A malformed envelope is ordinary text: the agent must not invent a boundary.
    return undefined;
  }
}

/**
 * Splits a prompt into its messages: a block belongs to the nearest preceding envelope.
 *
 * Deliberately not `unpackBatch` of @tributary/packing: this agent reads a prompt from its text alone, as
 * any ACP agent would. It takes prompts nobody packed (no envelope, partial envelopes), which unpackBatch
 * rejects, and it stays a reader independent of the packer. test/packed-prompt.test.ts keeps the two in
 * step.
 */
export function splitMessages(prompt: readonly ContentBlock[]): PromptMessage[] {
  const messages: PromptMessage[] = [];
  for (const block of prompt) {
    const sender = parseSenderContext(block);
    if (sender) {
      messages.push({ sender, blocks: [] });
      continue;
    }
    let current = messages.at(-1);
    if (!current) {
      current = { sender: undefined, blocks: [] };
      messages.push(current);
    }
    current.blocks.push(block);
  }
  return messages;
}
