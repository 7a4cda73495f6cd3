import type { MessageRef } from '../message-ref.js';

export const GATEWAY_REPLY_SCHEMA = 'openab.gateway.reply.v1';

/** The body posted to an openab-compatible gateway; a broker notice is a text reply like any other. */
export function gatewayReplyBody(target: MessageRef, text: string, requestId: string) {
  return {
    schema: GATEWAY_REPLY_SCHEMA,
    reply_to: target.replyRef ?? target.messageId,
    platform: target.platform,
    channel: {
      id: target.channelId,
      ...(target.threadId === undefined ? {} : { thread_id: target.threadId }),
    },
    content: { type: 'text', text },
    request_id: requestId,
    quote_message_id: target.messageId,
  };
}

/** What openab's reply protocol asks a gateway to do besides posting text. */
export type GatewayCommand = 'add_reaction' | 'remove_reaction';

/**
 * Tributary's extension of the reply protocol for permission requests (docs/platforms/gateway.md):
 * `ask_approval` posts `content.text` with a button per `approval.options` entry, each carrying the
 * `data` a click sends back in an `approval` event; `settle_approval` replaces the request named by
 * `reply_to` (its `request_id`) with `content.text`, buttons gone.
 */
export function gatewayApprovalBody(
  target: MessageRef,
  command: 'ask_approval' | 'settle_approval',
  text: string,
  requestId: string,
  options?: readonly { data: string; name: string; kind: string }[],
) {
  return {
    ...gatewayReplyBody(target, text, requestId),
    command,
    ...(command === 'settle_approval' ? { reply_to: requestId } : {}),
    ...(options === undefined ? {} : { approval: { options } }),
  };
}

/**
 * A reply that carries a command instead of a post: `reply_to` names the message the reaction goes on
 * (its upstream id) and `content.text` is the emoji, as openab's gateways expect.
 */
export function gatewayCommandBody(
  message: MessageRef,
  command: GatewayCommand,
  emoji: string,
  requestId: string,
) {
  return {
    schema: GATEWAY_REPLY_SCHEMA,
    reply_to: message.messageId,
    platform: message.platform,
    channel: {
      id: message.channelId,
      ...(message.threadId === undefined ? {} : { thread_id: message.threadId }),
    },
    content: { type: 'text', text: emoji },
    command,
    request_id: requestId,
  };
}
