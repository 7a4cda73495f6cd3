import { describe, expect, it } from 'vitest';
import { forwarded, forwardedBody, signedForward } from './discord-inbound-fixtures.js';
import { gateway, gatewayEvent, signedGatewayRequest } from './gateway-inbound-fixtures.js';
import { signedSlackRequest, slack, slackMessage } from './slack-inbound-fixtures.js';
import { messageOf } from './support-inbound.js';
import { telegram, telegramMessage, telegramRequest } from './telegram-inbound-fixtures.js';

/** A one-to-one conversation needs no mention: each adapter says when the message is one. */
describe('direct messages', () => {
  it('Telegram: a private chat is direct, a group is not', () => {
    const privately = telegramMessage({ chat: { id: 111, type: 'private', first_name: 'Alice' } });
    expect(messageOf(telegram.parse(telegramRequest(privately))).direct).toBe(true);
    expect(messageOf(telegram.parse(telegramRequest(telegramMessage()))).direct).toBe(false);
  });

  it('Slack: an im channel is direct, a channel is not', () => {
    expect(messageOf(slack.parse(signedSlackRequest(slackMessage({ channel_type: 'im' })))).direct).toBe(
      true,
    );
    expect(messageOf(slack.parse(signedSlackRequest(slackMessage({ channel_type: 'channel' })))).direct).toBe(
      false,
    );
  });

  it('Discord: a message without a guild is direct, even when the forwarder does not know its channel type', () => {
    const dm = forwardedBody({ guild_id: undefined }, { parent_id: null, type: null as unknown as number });
    const message = messageOf(forwarded.parse(signedForward(dm)));
    expect(message.direct).toBe(true);
    expect(message.thread).toBe(`discord:${dm.channel.id}`);
    expect(messageOf(forwarded.parse(signedForward(forwardedBody()))).direct).toBe(false);
  });

  it('gateway: everything a gateway forwards was meant for us', () => {
    expect(messageOf(gateway.parse(signedGatewayRequest(gatewayEvent()))).direct).toBe(true);
  });
});
