import type { PromptCapabilities } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import type { ArrivalEvent, Attachment, Sender } from '../src/index.js';
import { packBatch } from '../src/index.js';

const ALL: PromptCapabilities = { image: true, audio: true, embeddedContext: true };
const BASELINE: PromptCapabilities = {};

const alice: Sender = { id: 'U01ALICE', name: 'alice', displayName: 'Alice Liddell', isBot: false };
const ciBot: Sender = { id: 'B07CI', name: 'ci-bot', displayName: 'CI', isBot: true };

/** A Slack message in thread 1735723800.000100 of channel C0CHAN, sent at 09:30:<second>. */
function slack(second: string, sender: Sender, text: string, attachments: Attachment[] = []): ArrivalEvent {
  return {
    eventId: `C0CHAN:17357238${second}.000200`,
    platform: 'slack',
    channelId: 'C0CHAN',
    threadId: '1735723800.000100',
    sender,
    timestamp: `2025-01-01T09:30:${second}.000Z`,
    text,
    attachments,
  };
}

const BOUNDARY = { 'tributary/part': 'sender_context' };
const ALICE_00 =
  '<sender_context>\n{"schema":"openab.sender.v1","sender_id":"U01ALICE","sender_name":"alice","display_name":"Alice Liddell","channel":"slack","channel_id":"C0CHAN","thread_id":"1735723800.000100","is_bot":false,"timestamp":"2025-01-01T09:30:00.000Z"}\n</sender_context>';
const ALICE_08 =
  '<sender_context>\n{"schema":"openab.sender.v1","sender_id":"U01ALICE","sender_name":"alice","display_name":"Alice Liddell","channel":"slack","channel_id":"C0CHAN","thread_id":"1735723800.000100","is_bot":false,"timestamp":"2025-01-01T09:30:08.000Z"}\n</sender_context>';
const CI_BOT_04 =
  '<sender_context>\n{"schema":"openab.sender.v1","sender_id":"B07CI","sender_name":"ci-bot","display_name":"CI","channel":"slack","channel_id":"C0CHAN","thread_id":"1735723800.000100","is_bot":true,"timestamp":"2025-01-01T09:30:04.000Z"}\n</sender_context>';

const PNG = 'iVBORw0KGgo=';
const OGG = 'T2dnUwACAAAAAAAAAAA=';

describe('packBatch test vectors', () => {
  it('shows the agent neither the workspace nor the gateway delivery id: only replies use them', () => {
    const event = {
      ...slack('00', alice, 'check the build'),
      workspaceId: 'T0SECRETTEAM',
      replyRef: 'rr-delivery-7',
    };
    expect(packBatch([event], ALL)).toStrictEqual(packBatch([slack('00', alice, 'check the build')], ALL));
  });

  it('packs a single message as its boundary and its prompt', () => {
    expect(packBatch([slack('00', alice, 'check the build')], ALL)).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      { type: 'text', text: 'check the build' },
    ]);
  });

  it('puts an image after the prompt it came with', () => {
    const image: Attachment = { kind: 'image', mimeType: 'image/png', data: PNG, name: 'error.png' };
    expect(packBatch([slack('00', alice, 'what is this error?', [image])], ALL)).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      { type: 'text', text: 'what is this error?' },
      { type: 'image', mimeType: 'image/png', data: PNG, _meta: { 'tributary/name': 'error.png' } },
    ]);
  });

  it('puts a text file before the prompt and an image after it', () => {
    const event = slack('00', alice, 'why does this fail?', [
      { kind: 'text', name: 'build.log', mimeType: 'text/plain', text: 'error TS2345: bad argument\n' },
      { kind: 'image', mimeType: 'image/png', data: PNG, uri: 'https://files.slack.com/F01/shot.png' },
    ]);
    expect(packBatch([event], ALL)).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      {
        type: 'resource',
        resource: {
          uri: 'tributary://attachment/C0CHAN%3A1735723800.000200/0/build.log',
          mimeType: 'text/plain',
          text: 'error TS2345: bad argument\n',
        },
      },
      { type: 'text', text: 'why does this fail?' },
      { type: 'image', mimeType: 'image/png', data: PNG, uri: 'https://files.slack.com/F01/shot.png' },
    ]);
  });

  it('packs a voice note as its transcript and its audio, with no prompt block', () => {
    const event = slack('00', alice, '', [
      { kind: 'audio', mimeType: 'audio/ogg', data: OGG, name: 'voice-note.ogg' },
      { kind: 'text', name: 'voice-note.txt', mimeType: 'text/plain', text: 'check the build and run e2e' },
    ]);
    expect(packBatch([event], ALL)).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      {
        type: 'resource',
        resource: {
          uri: 'tributary://attachment/C0CHAN%3A1735723800.000200/1/voice-note.txt',
          mimeType: 'text/plain',
          text: 'check the build and run e2e',
        },
      },
      { type: 'audio', mimeType: 'audio/ogg', data: OGG, _meta: { 'tributary/name': 'voice-note.ogg' } },
    ]);
  });

  it('packs a voice note for an agent with baseline capabilities as a marked transcript and a link', () => {
    const event = slack('00', alice, '', [
      { kind: 'audio', mimeType: 'audio/ogg', data: OGG, name: 'voice-note.ogg' },
      { kind: 'text', name: 'voice-note.txt', mimeType: 'text/plain', text: 'check the build and run e2e' },
    ]);
    expect(packBatch([event], BASELINE)).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      {
        type: 'text',
        text: 'check the build and run e2e',
        _meta: {
          'tributary/part': 'attachment',
          'tributary/uri': 'tributary://attachment/C0CHAN%3A1735723800.000200/1/voice-note.txt',
          'tributary/mimeType': 'text/plain',
        },
      },
      {
        type: 'resource_link',
        uri: 'tributary://attachment/C0CHAN%3A1735723800.000200/0/voice-note.ogg',
        name: 'voice-note.ogg',
        mimeType: 'audio/ogg',
      },
    ]);
  });

  it('keeps three events from two interleaved senders in arrival order, each with its own boundary', () => {
    const events = [
      slack('00', alice, 'check the build'),
      slack('04', ciBot, 'build #812 failed: 3 tests'),
      slack('08', alice, 'actually wait, check the build and run e2e'),
    ];
    expect(packBatch(events, ALL)).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      { type: 'text', text: 'check the build' },
      { type: 'text', text: CI_BOT_04, _meta: BOUNDARY },
      { type: 'text', text: 'build #812 failed: 3 tests' },
      { type: 'text', text: ALICE_08, _meta: BOUNDARY },
      { type: 'text', text: 'actually wait, check the build and run e2e' },
    ]);
  });

  it('packs an image-only message as its boundary and the image', () => {
    const image: Attachment = {
      kind: 'image',
      mimeType: 'image/jpeg',
      data: PNG,
      uri: 'https://cdn.example/a.jpg',
    };
    expect(packBatch([slack('00', alice, '', [image])], ALL)).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      { type: 'image', mimeType: 'image/jpeg', data: PNG, uri: 'https://cdn.example/a.jpg' },
    ]);
  });

  it('turns images into resource links for an agent without image support, naming those with no URI', () => {
    const event = slack('00', alice, 'compare these', [
      {
        kind: 'image',
        mimeType: 'image/png',
        data: PNG,
        uri: 'https://files.slack.com/F01/before.png',
        name: 'before.png',
      },
      { kind: 'image', mimeType: 'image/png', data: PNG },
    ]);
    expect(packBatch([event], { embeddedContext: true })).toStrictEqual([
      { type: 'text', text: ALICE_00, _meta: BOUNDARY },
      { type: 'text', text: 'compare these' },
      {
        type: 'resource_link',
        uri: 'https://files.slack.com/F01/before.png',
        name: 'before.png',
        mimeType: 'image/png',
      },
      {
        type: 'resource_link',
        uri: 'tributary://attachment/C0CHAN%3A1735723800.000200/1/image-1',
        name: 'image-1',
        mimeType: 'image/png',
      },
    ]);
  });
});
