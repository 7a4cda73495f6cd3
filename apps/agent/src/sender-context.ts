import type { ContentBlock } from '@agentclientprotocol/sdk';

/** The fields of one `<sender_context>` envelope, left untyped: the agent reads a few and needs none. */
export type SenderContext = Record<string, unknown>;

/** One arrival event of a batch: its envelope and the blocks that follow it up to the next envelope. */
export interface PromptMessage {
  /**
   * Undefined for blocks that precede any boundary (a prompt not packed by Tributary), or when a
   * boundary's text is not a readable envelope.
   */
  sender: SenderContext | undefined;
  blocks: ContentBlock[];
}

/**
 * The broker's boundary mark (docs/adr/0003): `_meta` is set by whoever builds the ACP request, never by
 * a chat user, whose text only ever becomes a block's `text`.
 */
const PART = 'tributary/part';
const BOUNDARY = 'sender_context';

const OPEN = '<sender_context>\n';
const CLOSE = '\n</sender_context>';

/** The envelope of a marked boundary block; undefined when its text is not one. */
function envelopeOf(text: string): SenderContext | undefined {
  if (!text.startsWith(OPEN) || !text.endsWith(CLOSE)) return undefined;
  try {
    const value: unknown = JSON.parse(text.slice(OPEN.length, -CLOSE.length));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as SenderContext)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Splits a prompt into its messages: a block belongs to the nearest preceding boundary. A boundary is a
 * text block the broker marked in `_meta`; what a block's text says never makes one, so a user who types
 * a byte-exact `<sender_context>` block is still one message from its real sender.
 *
 * Deliberately not `unpackBatch` of @tributary/packing: this agent reads a prompt as a third-party ACP
 * agent would, from the documented mark alone. It takes prompts nobody packed (no boundary at all), which
 * unpackBatch rejects. test/packed-prompt.test.ts keeps the two in step.
 */
export function splitMessages(prompt: readonly ContentBlock[]): PromptMessage[] {
  const messages: PromptMessage[] = [];
  for (const block of prompt) {
    if (block.type === 'text' && block._meta?.[PART] === BOUNDARY) {
      messages.push({ sender: envelopeOf(block.text), blocks: [] });
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
