import type { PostTarget } from '../outbound.js';

export const GATEWAY_REPLY_SCHEMA = 'openab.gateway.reply.v1';

/** The body posted to an openab-compatible gateway; a broker notice is a text reply like any other. */
export function gatewayReplyBody(target: PostTarget, text: string, requestId: string) {
  const replyTo = target.replyRef ?? target.replyToMessageId;
  // Without these the gateway cannot tell which upstream platform and event the reply answers.
  if (target.platform === undefined || replyTo === undefined) {
    throw new Error(
      'a gateway reply needs the platform and the message it answers (PostTarget.platform, .replyToMessageId)',
    );
  }
  return {
    schema: GATEWAY_REPLY_SCHEMA,
    reply_to: replyTo,
    platform: target.platform,
    channel: {
      id: target.channelId,
      ...(target.threadId === undefined ? {} : { thread_id: target.threadId }),
    },
    content: { type: 'text', text },
    request_id: requestId,
    ...(target.replyToMessageId === undefined ? {} : { quote_message_id: target.replyToMessageId }),
  };
}
