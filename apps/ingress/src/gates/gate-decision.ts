import type { GateConfig } from '@tributary/config';

/** What the gate knows about one message and its thread. */
export interface GateInput {
  senderId: string;
  isBot: boolean;
  channelId: string;
  /** The message mentions us. */
  mentionsUs: boolean;
  /** The message mentions someone other than us. */
  mentionsOthers: boolean;
  /** We have accepted a message in this thread before, or the conversation is one-to-one. */
  involved: boolean;
  /** Bot messages accepted in a row in this thread, not counting this one. */
  botTurns: number;
}

export type GateRefusal =
  | 'channel-not-allowed'
  | 'user-not-allowed'
  | 'bot-messages-off'
  | 'bot-not-trusted'
  | 'bot-not-mentioning'
  | 'bot-turn-limit'
  | 'not-addressed';

export type GateVerdict = { admit: true } | { admit: false; reason: GateRefusal };

/** The allow lists alone: what a platform-delivered command (a Discord slash command) must pass. */
export function allowListVerdict(
  config: GateConfig,
  input: Pick<GateInput, 'senderId' | 'channelId'>,
): GateVerdict {
  if (config.allowedChannels.length > 0 && !config.allowedChannels.includes(input.channelId)) {
    return { admit: false, reason: 'channel-not-allowed' };
  }
  if (config.allowedUsers.length > 0 && !config.allowedUsers.includes(input.senderId)) {
    return { admit: false, reason: 'user-not-allowed' };
  }
  return { admit: true };
}

/**
 * Whether a message may become part of a prompt. Pure, so every policy combination is a table test;
 * the caller supplies the thread's state from Redis.
 */
export function decideGate(config: GateConfig, input: GateInput): GateVerdict {
  const refuse = (reason: GateRefusal): GateVerdict => ({ admit: false, reason });
  if (config.allowedChannels.length > 0 && !config.allowedChannels.includes(input.channelId)) {
    return refuse('channel-not-allowed');
  }
  if (input.isBot) {
    if (config.allowBotMessages === 'off') return refuse('bot-messages-off');
    if (config.trustedBotIds.length > 0 && !config.trustedBotIds.includes(input.senderId)) {
      return refuse('bot-not-trusted');
    }
    if (config.allowBotMessages === 'mentions' && !input.mentionsUs) return refuse('bot-not-mentioning');
    // Two agents answering each other would loop forever; a human message resets the count.
    if (input.botTurns >= config.maxBotTurns) return refuse('bot-turn-limit');
    return { admit: true };
  }
  if (config.allowedUsers.length > 0 && !config.allowedUsers.includes(input.senderId)) {
    return refuse('user-not-allowed');
  }
  if (input.mentionsUs) return { admit: true };
  switch (config.allowUserMessages) {
    case 'mentions':
      return refuse('not-addressed');
    case 'involved':
      return input.involved ? { admit: true } : refuse('not-addressed');
    case 'multibot-mentions':
      // In a thread shared with other bots, a message naming someone else is not for us.
      return input.involved && !input.mentionsOthers ? { admit: true } : refuse('not-addressed');
  }
}
