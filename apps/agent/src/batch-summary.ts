import type { ContentBlock } from '@agentclientprotocol/sdk';
import { withoutScriptLines } from './script.js';
import type { PromptMessage, SenderContext } from './sender-context.js';

const ECHO_LIMIT = 80;

function field(sender: SenderContext, key: string): string | undefined {
  const value = sender[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function describeSender(sender: SenderContext | undefined): string {
  if (!sender) return 'unknown sender (no sender_context)';
  const name = field(sender, 'display_name') ?? field(sender, 'sender_name') ?? 'unnamed';
  const where = [field(sender, 'channel_id'), field(sender, 'thread_id')].filter(Boolean).join('/');
  const details = [
    field(sender, 'sender_id'),
    sender.is_bot === true ? 'bot' : undefined,
    [field(sender, 'channel'), where].filter(Boolean).join(' '),
    // An edit of a message of an earlier turn: it replaces the one sent at `timestamp`.
    field(sender, 'edited_at') &&
      `edit at ${field(sender, 'edited_at')} of the message of ${field(sender, 'timestamp')}`,
  ].filter(Boolean);
  return details.length > 0 ? `${name} (${details.join(', ')})` : name;
}

function describeAttachments(blocks: readonly ContentBlock[]): string {
  const attachments = blocks.filter((block) => block.type !== 'text');
  if (attachments.length === 0) return 'no attachments';
  const kinds = new Map<string, number>();
  for (const { type } of attachments) kinds.set(type, (kinds.get(type) ?? 0) + 1);
  const list = [...kinds].map(([kind, count]) => `${kind}×${count}`).join(', ');
  return `${attachments.length} attachment${attachments.length === 1 ? '' : 's'} (${list})`;
}

/** Long enough to show a small file whole, short enough to keep a reply readable. */
const FILE_TEXT_LIMIT = 200;

/**
 * One line per attachment, with what the agent really got: an image's or audio clip's type and decoded
 * size, a file's text, a link's name and the broker's note on it (why the file was not fetched).
 */
function attachmentLines(blocks: readonly ContentBlock[]): string[] {
  return blocks.flatMap((block) => {
    const name = block._meta?.['tributary/name'];
    const named = typeof name === 'string' ? ` ${name}` : '';
    switch (block.type) {
      case 'image':
      case 'audio':
        return [
          `   - ${block.type}${named} (${block.mimeType}, ${Buffer.from(block.data, 'base64').length} bytes)`,
        ];
      case 'resource': {
        const { resource } = block;
        if (!('text' in resource)) return [`   - resource ${resource.uri}`];
        return [
          `   - file ${fileName(resource.uri)} (${resource.mimeType ?? 'no type'}): ${quote(resource.text)}`,
        ];
      }
      case 'resource_link':
        return [`   - link ${block.name}${block.description ? ` (note: ${block.description})` : ''}`];
      default:
        return block._meta?.['tributary/part'] === 'attachment'
          ? [`   - file ${fileName(String(block._meta['tributary/uri']))}: ${quote(block.text)}`]
          : [];
    }
  });
}

function fileName(uri: string): string {
  return decodeURIComponent(uri.slice(uri.lastIndexOf('/') + 1));
}

function quote(text: string): string {
  return JSON.stringify(text.length > FILE_TEXT_LIMIT ? `${text.slice(0, FILE_TEXT_LIMIT - 1)}…` : text);
}

function echo(blocks: readonly ContentBlock[], scripting: boolean): string {
  const text = blocks
    .flatMap((block) =>
      block.type === 'text' ? [scripting ? withoutScriptLines(block.text) : block.text.trim()] : [],
    )
    .filter((part) => part !== '')
    .join(' / ')
    .replace(/\s+/g, ' ');
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT - 1)}…` : text;
}

/**
 * The default reply: makes batching visible (how many messages, from whom, with which attachments, each
 * described on a line of its own) and says when the broker restored the conversation into a fresh
 * session (`restored` history blocks). With `scripting`, the echo leaves out the `@agent` lines that
 * scripted the turn.
 */
export function summarizeBatch(
  messages: readonly PromptMessage[],
  earlierTurns: number,
  restored = 0,
  scripting = false,
): string {
  const count = `${messages.length} message${messages.length === 1 ? '' : 's'}`;
  const lines = [`Received ${count} in this turn; session history: ${earlierTurns} earlier turn(s).`];
  if (restored > 0) lines.push(`Restored history from the broker: ${restored} block(s).`);
  lines.push(...messageLines(messages, scripting));
  return lines.join('\n');
}

/** The messages steered into a turn while it ran (docs/adr/0040), listed as a batch's are. */
export function summarizeSteers(messages: readonly PromptMessage[], scripting = false): string {
  const count = `${messages.length} message${messages.length === 1 ? '' : 's'}`;
  return [`Steered into this turn: ${count}.`, ...messageLines(messages, scripting)].join('\n');
}

function messageLines(messages: readonly PromptMessage[], scripting: boolean): string[] {
  return messages.flatMap((message, index) => [
    `${index + 1}. ${describeSender(message.sender)}: ${describeAttachments(message.blocks)} — "${echo(message.blocks, scripting)}"`,
    ...attachmentLines(message.blocks),
  ]);
}
