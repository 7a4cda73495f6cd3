import type { ContentBlock, PromptCapabilities } from '@agentclientprotocol/sdk';
import { META_MIME_TYPE, META_PART, META_URI } from './block-meta.js';

export const PARENT_SCHEMA = 'tributary.thread-parent.v1';

/** The message a platform thread started from, as the platform reported it. */
export interface ThreadParentMessage {
  messageId: string;
  senderId: string;
  senderName: string;
  text: string;
  timestamp: string;
}

/** Names a thread's parent message: an identity the agent can recognise, not a location it can fetch. */
export function parentUri(thread: string): string {
  return `tributary://thread/${encodeURIComponent(thread)}/parent`;
}

/**
 * The broker-origin block that tells a fresh session which message its thread hangs under: one JSON
 * object (so the parent's text cannot pass for structure), as a `resource`, or as a text block marked in
 * `_meta` for agents that take no embedded resources.
 */
export function buildParentBlock(
  thread: string,
  parent: ThreadParentMessage,
  caps: PromptCapabilities,
): ContentBlock {
  const uri = parentUri(thread);
  const text = JSON.stringify({
    schema: PARENT_SCHEMA,
    about: 'The message this thread started from, restored by the broker because the agent session is new.',
    thread,
    message_id: parent.messageId,
    sender_id: parent.senderId,
    sender_name: parent.senderName,
    timestamp: parent.timestamp,
    text: parent.text,
  });
  if (caps.embeddedContext) {
    return {
      type: 'resource',
      resource: { uri, mimeType: 'application/json', text },
      _meta: { [META_PART]: 'parent' },
    };
  }
  return {
    type: 'text',
    text,
    _meta: { [META_PART]: 'parent', [META_URI]: uri, [META_MIME_TYPE]: 'application/json' },
  };
}
