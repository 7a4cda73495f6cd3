import type { GateConfig } from '@tributary/config';
import type { GateConditions } from '@tributary/queue';

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

/** What the gate knows about a message before reading its thread's state. */
export type GatePlanInput = Omit<GateInput, 'involved' | 'botTurns'> & {
  /** The conversation is one-to-one (or pre-filtered): it counts as involved whatever the state. */
  direct: boolean;
};

/**
 * The verdict before the thread's state is read: a refusal, or admission under conditions on that
 * state (which the enqueue script checks as it accepts, so ingress needs one round trip).
 */
export type GatePlan = { admit: false; reason: GateRefusal } | { admit: true; conditions?: GateConditions };

export function planGate(config: GateConfig, input: GatePlanInput): GatePlan {
  const refuse = (reason: GateRefusal): GatePlan => ({ admit: false, reason });
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
    return { admit: true, conditions: { requireInvolved: false, maxBotTurns: config.maxBotTurns } };
  }
  if (config.allowedUsers.length > 0 && !config.allowedUsers.includes(input.senderId)) {
    return refuse('user-not-allowed');
  }
  if (input.mentionsUs) return { admit: true };
  const involved: GatePlan = input.direct
    ? { admit: true }
    : { admit: true, conditions: { requireInvolved: true } };
  switch (config.allowUserMessages) {
    case 'mentions':
      return refuse('not-addressed');
    case 'involved':
      return involved;
    case 'multibot-mentions':
      // In a thread shared with other bots, a message naming someone else is not for us.
      return input.mentionsOthers ? refuse('not-addressed') : involved;
  }
}

/** Whether the thread's state meets a plan's conditions; what the enqueue script checks. */
export function meetsConditions(
  conditions: GateConditions | undefined,
  state: Pick<GateInput, 'involved' | 'botTurns'>,
): GateVerdict {
  if (conditions?.requireInvolved && !state.involved) return { admit: false, reason: 'not-addressed' };
  if (conditions?.maxBotTurns !== undefined && state.botTurns >= conditions.maxBotTurns) {
    return { admit: false, reason: 'bot-turn-limit' };
  }
  return { admit: true };
}
