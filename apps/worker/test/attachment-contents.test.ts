import type { ArrivalEvent, LinkAttachment } from '@tributary/packing';
import { SlackClient } from '@tributary/platforms';
import { type FakeFile, type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttachmentContents, type AttachmentOutcome } from '../src/attachment-contents.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
/** A zip archive's magic bytes: neither text nor anything an agent takes as content. */
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0, 0, 0, 0]);

let api: FakePlatformApi;
let png: FakeFile;
let text: FakeFile;
let zip: FakeFile;
beforeAll(async () => {
  api = await startFakePlatformApi();
  png = api.seedFile({ name: 'a.png', bytes: PNG, contentType: 'image/png' });
  text = api.seedFile({ name: 'a.txt', bytes: Buffer.from('plain words'), contentType: 'text/plain' });
  zip = api.seedFile({ name: 'a.bin', bytes: ZIP, contentType: 'application/octet-stream' });
});
afterAll(() => api.close());

function contents(maxCount: number, outcomes: AttachmentOutcome[] = []) {
  const slack = new SlackClient({ token: api.tokens.slack, baseUrl: api.urls.slack, filesUrl: api.origin });
  return new AttachmentContents({
    clients: new Map([['slack', slack]]),
    limits: { maxBytes: 1024, maxCount, timeoutMs: 5_000 },
    logger: pino({ level: 'silent' }),
    onOutcome: (_platform, outcome) => outcomes.push(outcome),
  });
}

const link = (file: FakeFile, name: string, mimeType?: string): LinkAttachment => ({
  kind: 'link',
  uri: file.slackUrl,
  name,
  ...(mimeType ? { mimeType } : {}),
  source: { platform: 'slack', ref: file.slackUrl, size: file.size },
});

const event = (id: string, attachments: LinkAttachment[]): ArrivalEvent => ({
  eventId: id,
  platform: 'slack',
  channelId: 'C1',
  sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
  timestamp: '2025-01-01T09:30:00.000Z',
  text: '',
  attachments,
});

const downloads = () => api.calls().filter((call) => call.method === 'file').length;

describe('AttachmentContents', () => {
  it('downloads at most the per-turn count, earliest first; the rest get a note', async () => {
    const outcomes: AttachmentOutcome[] = [];
    const [first, second] = await contents(2, outcomes).resolve(
      [
        event('1', [link(png, 'one.png', 'image/png'), link(text, 'two.txt')]),
        event('2', [link(text, 'three.txt')]),
      ],
      { image: true },
    );
    expect(first!.attachments.map((a) => a.kind)).toEqual(['image', 'text']);
    expect(second!.attachments).toEqual([
      {
        kind: 'link',
        uri: text.slackUrl,
        name: 'three.txt',
        notice:
          'Tributary could not fetch this file for the agent: the turn already carries 2 downloaded files.',
      },
    ]);
    expect(outcomes).toEqual(['fetched', 'fetched', 'too_many']);
  });

  it('leaves images as links, undownloaded, for an agent without image support', async () => {
    const before = downloads();
    const [resolved] = await contents(10).resolve([event('3', [link(png, 'one.png', 'image/png')])], {});
    expect(resolved!.attachments).toEqual([link(png, 'one.png', 'image/png')]);
    expect(downloads()).toBe(before);
  });

  it('keeps a downloaded file that is neither media nor text as the link it was', async () => {
    const [resolved] = await contents(10).resolve([event('4', [link(zip, 'a.bin')])], { image: true });
    const { source: _source, ...plain } = link(zip, 'a.bin');
    expect(resolved!.attachments).toEqual([plain]);
  });
});
