import type { ContentBlock } from '@agentclientprotocol/sdk';

export const text = (value: string): ContentBlock => ({ type: 'text', text: value });

/** A hand-written envelope with only the fields a test names; packed-prompt.test.ts uses the real packer. */
export const senderContext = (fields: object): ContentBlock =>
  text(`<sender_context>\n${JSON.stringify({ schema: 'openab.sender.v1', ...fields })}\n</sender_context>`);
