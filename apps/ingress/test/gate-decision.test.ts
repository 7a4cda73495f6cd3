import type { GateConfig } from '@tributary/config';
import { describe, expect, it } from 'vitest';
import { type GateInput, type GateVerdict, meetsConditions, planGate } from '../src/gates/gate-decision.js';

/**
 * Ingress's two halves composed, as a message meets them: the stateless plan, then the conditions on
 * the thread's gate state (which the enqueue script checks). A direct conversation is one we are in.
 */
function decideGate(config: GateConfig, input: GateInput): GateVerdict {
  const plan = planGate(config, { ...input, direct: input.involved });
  return plan.admit ? meetsConditions(plan.conditions, input) : plan;
}

const open: GateConfig = {
  allowBotMessages: 'off',
  trustedBotIds: [],
  allowUserMessages: 'involved',
  allowedChannels: [],
  allowedUsers: [],
  maxBotTurns: 3,
};

const human: GateInput = {
  senderId: 'U1',
  isBot: false,
  channelId: 'C1',
  mentionsUs: false,
  mentionsOthers: false,
  involved: false,
  botTurns: 0,
};

const bot: GateInput = { ...human, senderId: 'B1', isBot: true };

describe('decideGate', () => {
  it.each([
    ['a mention starts a conversation', open, { ...human, mentionsUs: true }, true],
    ['an unaddressed message in a new thread is not for us', open, human, 'not-addressed'],
    ['a thread we are in needs no mention', open, { ...human, involved: true }, true],
    [
      'mentions policy wants a mention even in our thread',
      { ...open, allowUserMessages: 'mentions' },
      { ...human, involved: true },
      'not-addressed',
    ],
    [
      'multibot: a message naming another bot is theirs',
      { ...open, allowUserMessages: 'multibot-mentions' },
      { ...human, involved: true, mentionsOthers: true },
      'not-addressed',
    ],
    [
      'multibot: naming us and others is ours',
      { ...open, allowUserMessages: 'multibot-mentions' },
      { ...human, involved: true, mentionsOthers: true, mentionsUs: true },
      true,
    ],
    [
      'multibot: an unnamed message in our thread is ours',
      { ...open, allowUserMessages: 'multibot-mentions' },
      { ...human, involved: true },
      true,
    ],
    [
      'channel outside the allow list',
      { ...open, allowedChannels: ['C9'] },
      { ...human, mentionsUs: true },
      'channel-not-allowed',
    ],
    [
      'user outside the allow list',
      { ...open, allowedUsers: ['U9'] },
      { ...human, mentionsUs: true },
      'user-not-allowed',
    ],
    ['user on the allow list', { ...open, allowedUsers: ['U1'] }, { ...human, mentionsUs: true }, true],
    ['bots are off by default', open, { ...bot, mentionsUs: true }, 'bot-messages-off'],
    ['bots on mention only', { ...open, allowBotMessages: 'mentions' }, bot, 'bot-not-mentioning'],
    ['bot mentioning us', { ...open, allowBotMessages: 'mentions' }, { ...bot, mentionsUs: true }, true],
    ['all bots', { ...open, allowBotMessages: 'all' }, bot, true],
    ['untrusted bot', { ...open, allowBotMessages: 'all', trustedBotIds: ['B2'] }, bot, 'bot-not-trusted'],
    ['trusted bot', { ...open, allowBotMessages: 'all', trustedBotIds: ['B1'] }, bot, true],
    ['loop guard below the limit', { ...open, allowBotMessages: 'all' }, { ...bot, botTurns: 2 }, true],
    [
      'loop guard at the limit',
      { ...open, allowBotMessages: 'all' },
      { ...bot, botTurns: 3 },
      'bot-turn-limit',
    ],
    ['humans are never loop-guarded', open, { ...human, involved: true, botTurns: 99 }, true],
  ] as const)('%s', (_, config, input, expected) => {
    const verdict = decideGate(config as GateConfig, input as GateInput);
    expect(verdict).toEqual(expected === true ? { admit: true } : { admit: false, reason: expected });
  });
});
