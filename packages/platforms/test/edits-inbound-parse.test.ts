import { describe, expect, it } from 'vitest';
import type { Inbound, InboundMessage } from '../src/inbound.js';
import { CHANNEL, forwarded, forwardedBody, signedForward, THREAD } from './discord-inbound-fixtures.js';
import { signedSlackRequest, slack, slackMessage, TS } from './slack-inbound-fixtures.js';
import { rejection } from './support-inbound.js';
import { alice, DATE, GROUP, telegram, telegramRequest } from './telegram-inbound-fixtures.js';

function editOf(inbound: Inbound): InboundMessage {
  if (inbound.kind !== 'edit') throw new Error(`expected an edit, got ${JSON.stringify(inbound)}`);
  return inbound.message;
}

const EDITED_TS = '1735723860.000400';

/** Slack's documented `message_changed` event for a reply in a thread. */
const slackChange = (message: Record<string, unknown> = {}) =>
  slackMessage({
    subtype: 'message_changed',
    hidden: true,
    ts: EDITED_TS,
    event_ts: EDITED_TS,
    user: undefined,
    text: undefined,
    message: {
      type: 'message',
      user: 'U0ALICE',
      text: 'check the build, then deploy',
      ts: '1735723830.000300',
      thread_ts: TS,
      edited: { user: 'U0ALICE', ts: EDITED_TS },
      ...message,
    },
    previous_message: { type: 'message', user: 'U0ALICE', text: 'check the build', ts: '1735723830.000300' },
  });

describe('Slack edits and deletes', () => {
  it('parses message_changed as the message it now is, under the original identity, marked with the edit time', () => {
    const edit = editOf(slack.parse(signedSlackRequest(slackChange())));
    expect(edit.event).toMatchObject({
      eventId: '1735723830.000300',
      threadId: TS,
      text: 'check the build, then deploy',
      timestamp: '2025-01-01T09:30:30.000Z',
      editedAt: '2025-01-01T09:31:00.000Z',
    });
    expect(edit.thread).toBe(`slack:C0CHAN:${TS}`);
    expect(edit.idempotencyKey).toBe(`slack:C0CHAN:1735723830.000300:edit:${EDITED_TS}`);
    expect(edit.ref.messageId).toBe('1735723830.000300');
  });

  it('ignores a change nobody made (an unfurl has no `edited`) and our own edits', () => {
    expect(slack.parse(signedSlackRequest(slackChange({ edited: undefined })))).toEqual({
      kind: 'ignored',
      reason: 'slack message_changed without an edit',
    });
    expect(slack.parse(signedSlackRequest(slackChange({ user: 'U0BOT' })))).toMatchObject({
      kind: 'ignored',
    });
  });

  it('refuses an edit whose time is not a Slack ts', () => {
    const bad = slackChange({ edited: { user: 'U0ALICE', ts: 'yesterday' } });
    expect(rejection(() => slack.parse(signedSlackRequest(bad))).message).toContain(
      'event.message.edited.ts',
    );
  });

  it('parses message_deleted as a delete of deleted_ts in the thread of the previous message', () => {
    const body = slackMessage({
      subtype: 'message_deleted',
      hidden: true,
      ts: EDITED_TS,
      event_ts: EDITED_TS,
      deleted_ts: '1735723830.000300',
      user: undefined,
      text: undefined,
      previous_message: {
        type: 'message',
        user: 'U0ALICE',
        text: 'x',
        ts: '1735723830.000300',
        thread_ts: TS,
      },
    });
    expect(slack.parse(signedSlackRequest(body))).toEqual({
      kind: 'delete',
      thread: `slack:C0CHAN:${TS}`,
      messageId: '1735723830.000300',
      idempotencyKey: 'slack:C0CHAN:1735723830.000300:delete',
      ref: {
        platform: 'slack',
        channelId: 'C0CHAN',
        threadId: TS,
        messageId: '1735723830.000300',
        workspaceId: 'T0TEAM',
      },
    });
  });
});

describe('Telegram edits', () => {
  const editedUpdate = (kind: string, updateId: number) => ({
    update_id: updateId,
    [kind]: {
      message_id: 42,
      from: alice,
      chat: { id: GROUP, type: 'supergroup', title: 'Builds' },
      date: DATE,
      edit_date: DATE + 90,
      text: 'check the build, then deploy',
    },
  });

  it('parses edited_message as the message it now is, its update being the edit’s identity', () => {
    const edit = editOf(telegram.parse(telegramRequest(editedUpdate('edited_message', 5002))));
    expect(edit.event).toMatchObject({
      eventId: '42',
      text: 'check the build, then deploy',
      timestamp: '2025-01-01T09:30:00.000Z',
      editedAt: '2025-01-01T09:31:30.000Z',
    });
    expect(edit.thread).toBe(`telegram:${GROUP}:main`);
    expect(edit.idempotencyKey).toBe(`telegram:${GROUP}:42:edit:5002`);
    // Two edits within one second of edit_date are still two edits.
    expect(
      editOf(telegram.parse(telegramRequest(editedUpdate('edited_message', 5003)))).idempotencyKey,
    ).not.toBe(edit.idempotencyKey);
  });

  it('parses edited_channel_post the same way', () => {
    expect(telegram.parse(telegramRequest(editedUpdate('edited_channel_post', 5004))).kind).toBe('edit');
  });
});

describe('Discord edits and deletes through the forwarder', () => {
  it('parses a forwarded MESSAGE_UPDATE with edited_timestamp as an edit', () => {
    const body = {
      ...forwardedBody({
        content: 'check the build, then deploy',
        edited_timestamp: '2025-01-01T09:31:00.5+00:00',
      }),
      dispatch: 'MESSAGE_UPDATE',
    };
    const edit = editOf(forwarded.parse(signedForward(body)));
    expect(edit.event).toMatchObject({
      eventId: '800000000000000008',
      text: 'check the build, then deploy',
      timestamp: '2025-01-01T09:30:00.123Z',
      editedAt: '2025-01-01T09:31:00.500Z',
    });
    expect(edit.idempotencyKey).toBe(`discord:${CHANNEL}:800000000000000008:edit:2025-01-01T09:31:00.500Z`);
  });

  it('ignores an update without edited_timestamp (embeds Discord resolved)', () => {
    const body = { ...forwardedBody({ edited_timestamp: null }), dispatch: 'MESSAGE_UPDATE' };
    expect(forwarded.parse(signedForward(body))).toEqual({
      kind: 'ignored',
      reason: 'discord message update without an edit',
    });
  });

  it('parses a forwarded MESSAGE_DELETE, which carries only ids', () => {
    const body = {
      schema: 'tributary.discord.forwarded.v1',
      dispatch: 'MESSAGE_DELETE',
      message: { id: '800000000000000008', channel_id: THREAD, guild_id: '900000000000000009' },
      channel: { id: THREAD, parent_id: CHANNEL, type: 11 },
    };
    expect(forwarded.parse(signedForward(body))).toEqual({
      kind: 'delete',
      thread: `discord:${THREAD}`,
      messageId: '800000000000000008',
      idempotencyKey: `discord:${THREAD}:800000000000000008:delete`,
      ref: { platform: 'discord', channelId: THREAD, messageId: '800000000000000008' },
    });
  });

  it('refuses a dispatch it does not know', () => {
    const body = { ...forwardedBody(), dispatch: 'MESSAGE_REACTION_ADD' };
    expect(rejection(() => forwarded.parse(signedForward(body))).message).toContain('dispatch must be');
  });
});
