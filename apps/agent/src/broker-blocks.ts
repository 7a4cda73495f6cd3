import type { ContentBlock } from '@agentclientprotocol/sdk';

const BROKER_URI = /^tributary:\/\/thread\/[^/]+\/(?:history|parent)$/;
const BROKER_PARTS = new Set(['history', 'parent']);

/**
 * The broker's own blocks (the history and the thread's parent message restored on a fresh session),
 * told apart from the users' messages by what an agent can see: a `tributary://thread/<thread>/history`
 * or `…/parent` resource, or the same content as a text block marked in `_meta` for agents that take
 * no resources.
 */
export function isBrokerBlock(block: ContentBlock): boolean {
  if (block.type === 'resource') return BROKER_URI.test(block.resource.uri);
  return BROKER_PARTS.has(String(block._meta?.['tributary/part']));
}
