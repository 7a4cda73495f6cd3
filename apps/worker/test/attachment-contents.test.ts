import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ArrivalEvent, LinkAttachment } from '@tributary/packing';
import { GatewayClient, type PlatformClient, SlackClient } from '@tributary/platforms';
import { type FakeFile, type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AttachmentContents,
  type AttachmentLimits,
  type AttachmentOutcome,
} from '../src/attachments/attachment-contents.js';
import { ByteBudget } from '../src/attachments/byte-budget.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
/** A gzip stream's magic bytes: neither text nor anything an agent takes as content. */
const GZIP = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03, 0x4b, 0x04, 0x00]);

let api: FakePlatformApi;
let png: FakeFile;
let text: FakeFile;
let gzip: FakeFile;
let page: FakeFile;
/** A file host that sends headers and then one byte a second, forever; how many requests reached it. */
let trickle: { server: Server; origin: string; requests: number };
beforeAll(async () => {
  api = await startFakePlatformApi();
  png = api.seedFile({ name: 'a.png', bytes: PNG, contentType: 'image/png' });
  text = api.seedFile({ name: 'a.txt', bytes: Buffer.from('plain words'), contentType: 'text/plain' });
  gzip = api.seedFile({ name: 'a.gz', bytes: GZIP, contentType: 'application/octet-stream' });
  page = api.seedFile({ name: 'page.txt', bytes: Buffer.alloc(600, 'w'), contentType: 'text/plain' });
  const server = createServer((_req, res) => {
    trickle.requests++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('x'), 1_000);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  trickle = { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: 0 };
});
afterAll(async () => {
  trickle.server.closeAllConnections();
  trickle.server.close();
  await api.close();
});

const slack = () =>
  new SlackClient({ token: api.tokens.slack, baseUrl: api.urls.slack, filesUrl: api.origin });

function contents(
  limits: Partial<AttachmentLimits> = {},
  outcomes: AttachmentOutcome[] = [],
  budget = new ByteBudget(1024 * 1024),
  clients: [string, PlatformClient][] = [['slack', slack()]],
) {
  return new AttachmentContents({
    clients: new Map(clients),
    limits: { maxBytes: 1024, maxCount: 10, maxTurnBytes: 4096, timeoutMs: 5_000, ...limits },
    budget,
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
const NOTE = 'Tributary could not fetch this file for the agent:';

describe('AttachmentContents', () => {
  it('downloads at most the per-turn count, earliest first; the rest get a note', async () => {
    const outcomes: AttachmentOutcome[] = [];
    const { events } = await contents({ maxCount: 2 }, outcomes).resolve(
      [
        event('1', [link(png, 'one.png', 'image/png'), link(text, 'two.txt')]),
        event('2', [link(text, 'three.txt')]),
      ],
      { image: true },
    );
    expect(events[0]!.attachments.map((a) => a.kind)).toEqual(['image', 'text']);
    expect(events[1]!.attachments).toEqual([
      {
        kind: 'link',
        uri: text.slackUrl,
        name: 'three.txt',
        notice: `${NOTE} the turn already carries 2 downloaded files.`,
      },
    ]);
    expect(outcomes).toEqual(['too_many', 'fetched', 'fetched']);
  });

  it('passes files up to the share of the prompt they may take, earliest first; the rest get a note, undownloaded', async () => {
    const outcomes: AttachmentOutcome[] = [];
    const before = downloads();
    // 600 bytes each, 602 as JSON strings: two fit in 1500, the third is refused by its declared size.
    const { events } = await contents({ maxTurnBytes: 1500 }, outcomes).resolve(
      [event('1', [link(page, 'p1.txt'), link(page, 'p2.txt')]), event('2', [link(page, 'p3.txt')])],
      {},
    );
    expect(events.flatMap((e) => e.attachments.map((a) => a.kind))).toEqual(['text', 'text', 'link']);
    expect(events[1]!.attachments[0]).toMatchObject({
      notice: `${NOTE} the files before it already take 1.2 KiB of the 1.5 KiB one prompt carries; send it again on its own.`,
    });
    expect(downloads() - before).toBe(2);
    expect(outcomes.sort()).toEqual(['fetched', 'fetched', 'turn_full']);
  });

  it('measures a file by what it takes in the prompt: text that escapes to more than the share is refused after download', async () => {
    const quotes = api.seedFile({ name: 'q.txt', bytes: Buffer.alloc(600, '"'), contentType: 'text/plain' });
    const outcomes: AttachmentOutcome[] = [];
    // 600 bytes on the platform, 1202 in the prompt (every quote escaped): both fit the share by their
    // declared sizes, only the first once downloaded.
    const { events } = await contents({ maxTurnBytes: 1300 }, outcomes).resolve(
      [event('1', [link(page, 'p.txt'), link(quotes, 'q.txt')])],
      {},
    );
    expect(events[0]!.attachments.map((a) => a.kind)).toEqual(['text', 'link']);
    expect(outcomes).toEqual(['fetched', 'fetched', 'turn_full']);
  });

  it('leaves images as links, undownloaded, for an agent without image support', async () => {
    const before = downloads();
    const { events } = await contents().resolve([event('3', [link(png, 'one.png', 'image/png')])], {});
    expect(events[0]!.attachments).toEqual([link(png, 'one.png', 'image/png')]);
    expect(downloads()).toBe(before);
  });

  it('notes a downloaded file that is neither media nor text (a gzip) instead of passing a bare link', async () => {
    const outcomes: AttachmentOutcome[] = [];
    const { events } = await contents({}, outcomes).resolve([event('4', [link(gzip, 'a.gz')])], {
      image: true,
    });
    const { source: _source, ...plain } = link(gzip, 'a.gz');
    expect(events[0]!.attachments).toEqual([
      {
        ...plain,
        notice:
          'Tributary downloaded this file but did not pass it to the agent: it is application/gzip, neither text nor media the agent takes.',
      },
    ]);
    expect(outcomes).toEqual(['unsupported']);
  });

  it("waits for the worker's byte budget, and notes the file when other turns hold it past the deadline", async () => {
    const budget = new ByteBudget(1000);
    const outcomes: AttachmentOutcome[] = [];
    const first = await contents({}, outcomes, budget).resolve([event('5', [link(page, 'p.txt')])], {});
    // Held by the declared size: the budget counts memory, the share counts the prompt.
    expect(budget.held).toBe(600);
    const second = await contents({ timeoutMs: 300 }, outcomes, budget).resolve(
      [event('6', [link(page, 'p.txt')])],
      {},
    );
    expect(second.events[0]!.attachments[0]).toMatchObject({
      kind: 'link',
      notice: expect.stringContaining(NOTE),
    });
    first.release();
    expect(budget.held).toBe(0);
    const third = await contents({}, outcomes, budget).resolve([event('7', [link(page, 'p.txt')])], {});
    expect(third.events[0]!.attachments[0]!.kind).toBe('text');
    expect(outcomes).toEqual(['fetched', 'busy', 'fetched']);
  });

  it("downloads a turn's files side by side under one deadline: slow hosts cannot hold it a deadline per file", async () => {
    const gateway = new GatewayClient({ replyUrl: `${trickle.origin}/reply`, filesUrl: trickle.origin });
    const slow = (n: number): LinkAttachment => ({
      kind: 'link',
      uri: `${trickle.origin}/f${n}.txt`,
      name: `f${n}.txt`,
      mimeType: 'text/plain',
      source: { platform: 'gateway', ref: `${trickle.origin}/f${n}.txt` },
    });
    trickle.requests = 0;
    let requestsAtFirstOutcome = 0;
    const outcomes: AttachmentOutcome[] = [];
    const resolver = new AttachmentContents({
      clients: new Map([['gateway', gateway]]),
      limits: { maxBytes: 1024, maxCount: 10, maxTurnBytes: 1024 * 1024, timeoutMs: 1_000 },
      budget: new ByteBudget(1024 * 1024),
      logger: pino({ level: 'silent' }),
      onOutcome: (_platform, outcome) => {
        if (outcomes.length === 0) requestsAtFirstOutcome = trickle.requests;
        outcomes.push(outcome);
      },
    });
    const { events } = await resolver.resolve([event('8', [slow(1), slow(2), slow(3), slow(4)])], {});
    expect(requestsAtFirstOutcome).toBe(4);
    expect(outcomes).toEqual(['timed_out', 'timed_out', 'timed_out', 'timed_out']);
    expect(events[0]!.attachments[0]).toMatchObject({
      notice: `${NOTE} the turn's downloads took longer than 1 s.`,
    });
  });
});
