import { countTokens as countO200kTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ArrivalEvent } from './arrival-event.js';
import { senderContextBlockText } from './sender-context.js';

/**
 * What one image, audio clip or link is assumed to cost. Models do not tokenize media as text; 1,600 is
 * what Anthropic charges for an image at its 1.15-megapixel size cap ((width × height) / 750). A link
 * costs far less, and that is fine: the estimate only paces batches, so overestimating ends a batch a
 * little early and never truncates anything.
 */
export const NON_TEXT_BLOCK_TOKENS = 1600;

// A user may type '<|endoftext|>'; to us it is text, and the tokenizer would otherwise throw on it.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** BPE tokens in o200k_base (GPT-4o and later). Other models' counts differ, but not by much. */
export function countTokens(text: string): number {
  return countO200kTokens(text, PLAIN_TEXT);
}

/** Tokens of the event's <sender_context> block: the fixed cost of the envelope, per event. */
export function envelopeTokens(event: ArrivalEvent): number {
  return countTokens(senderContextBlockText(event));
}

/**
 * What the event adds to a prompt, for the batch token cap: the tokens of its envelope, prompt and text
 * attachments, plus the fixed estimate per other attachment. It ignores the agent's capabilities and the
 * few tokens of attachment URIs, so ingress can compute it once per event.
 */
export function eventTokens(event: ArrivalEvent): number {
  let tokens = envelopeTokens(event) + countTokens(event.text);
  for (const attachment of event.attachments) {
    tokens += attachment.kind === 'text' ? countTokens(attachment.text) : NON_TEXT_BLOCK_TOKENS;
  }
  return tokens;
}
