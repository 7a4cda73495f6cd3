import type { ContentBlock, PromptCapabilities } from '@agentclientprotocol/sdk';
import type { ArrivalEvent, Attachment } from './arrival-event.js';
import { META_MIME_TYPE, META_PART, META_URI } from './block-meta.js';
import { senderContext } from './sender-context.js';
import { countTokens } from './token-count.js';

export const HISTORY_SCHEMA = 'tributary.history.v1';
export const HISTORY_MIME_TYPE = 'application/x-ndjson';
/** Tokens a restored history may take by default: a few dozen chat turns, a small share of a context. */
export const DEFAULT_HISTORY_TOKENS = 8_000;

/** One complete turn of a thread: the events of its batch, in order, and the agent's reply. */
export interface HistoryTurn {
  batchId: string;
  /** When the turn ended, ms since the Unix epoch. */
  endedAt: number;
  events: readonly ArrivalEvent[];
  reply: string;
  stopReason: string;
}

export interface HistoryBlock {
  block: ContentBlock;
  /** Turns in the block, and older turns left out to stay within the budget. */
  turns: number;
  omittedTurns: number;
  tokens: number;
}

export interface HistoryBlockOptions {
  maxTokens: number;
  /** Without `embeddedContext` the block is a text block carrying the resource's fields in `_meta`. */
  caps: PromptCapabilities;
}

/** Names a thread's history: an identity the agent can recognise, not a location it can fetch. */
export function historyUri(thread: string): string {
  return `tributary://thread/${encodeURIComponent(thread)}/history`;
}

/** True for the block `buildHistoryBlock` makes, in either form. */
export function isHistoryBlock(block: ContentBlock): boolean {
  return block._meta?.[META_PART] === 'history';
}

/**
 * The one broker-origin block that gives a fresh agent session the conversation so far: JSON Lines, a
 * header line, then per turn (oldest first) one line per event (its sender_context, text and
 * attachments, as received) and one line for the agent's reply. JSON keeps every user's text intact
 * and unable to pass for structure. Within `maxTokens` the newest turns are kept and older ones are
 * left out whole; undefined when no turn fits (or there is none).
 */
export function buildHistoryBlock(
  thread: string,
  turns: readonly HistoryTurn[],
  options: HistoryBlockOptions,
): HistoryBlock | undefined {
  const rendered = turns.map((turn) => {
    const lines = turnLines(turn);
    return { lines, tokens: countTokens(lines.join('')) };
  });
  // Newest first, while the estimate (the sum of the parts) fits; the exact count is checked below.
  let kept = 0;
  let estimate = countTokens(headerLine(thread, turns.length, turns.length));
  for (let i = rendered.length - 1; i >= 0 && estimate + rendered[i]!.tokens <= options.maxTokens; i--) {
    estimate += rendered[i]!.tokens;
    kept++;
  }
  for (; kept > 0; kept--) {
    const omitted = turns.length - kept;
    const text =
      headerLine(thread, kept, omitted) +
      rendered
        .slice(omitted)
        .flatMap((turn) => turn.lines)
        .join('');
    const tokens = countTokens(text);
    if (tokens <= options.maxTokens) {
      return {
        block: historyContent(thread, text, options.caps),
        turns: kept,
        omittedTurns: omitted,
        tokens,
      };
    }
  }
  return undefined;
}

function historyContent(thread: string, text: string, caps: PromptCapabilities): ContentBlock {
  const uri = historyUri(thread);
  if (caps.embeddedContext) {
    return {
      type: 'resource',
      resource: { uri, mimeType: HISTORY_MIME_TYPE, text },
      _meta: { [META_PART]: 'history' },
    };
  }
  return {
    type: 'text',
    text,
    _meta: { [META_PART]: 'history', [META_URI]: uri, [META_MIME_TYPE]: HISTORY_MIME_TYPE },
  };
}

function headerLine(thread: string, turns: number, omitted: number): string {
  return line({
    schema: HISTORY_SCHEMA,
    about:
      'Earlier turns of this conversation, restored by the broker because the agent session is new; ' +
      'oldest first.',
    thread,
    turns,
    omitted_turns: omitted,
  });
}

function turnLines(turn: HistoryTurn): string[] {
  const batch = turn.batchId;
  return [
    ...turn.events.map((event) =>
      line({
        batch_id: batch,
        role: 'user',
        sender_context: senderContext(event),
        text: event.text,
        ...(event.attachments.length === 0 ? {} : { attachments: event.attachments.map(attachmentEntry) }),
      }),
    ),
    line({
      batch_id: batch,
      role: 'agent',
      ended_at: new Date(turn.endedAt).toISOString(),
      stop_reason: turn.stopReason,
      text: turn.reply,
    }),
  ];
}

/** Text attachments keep their text; media are named, not repeated (their bytes would swamp a budget). */
function attachmentEntry(attachment: Attachment): Record<string, string> {
  switch (attachment.kind) {
    case 'text':
      return { kind: 'text', name: attachment.name, mime_type: attachment.mimeType, text: attachment.text };
    case 'link':
      return {
        kind: 'link',
        name: attachment.name,
        uri: attachment.uri,
        ...(attachment.mimeType === undefined ? {} : { mime_type: attachment.mimeType }),
      };
    default:
      return {
        kind: attachment.kind,
        mime_type: attachment.mimeType,
        ...(attachment.name === undefined ? {} : { name: attachment.name }),
        ...(attachment.uri === undefined ? {} : { uri: attachment.uri }),
      };
  }
}

function line(value: object): string {
  return `${JSON.stringify(value)}\n`;
}
