import { arrivalFromBody } from '@tributary/packing';
import { signedRequestHeaders } from '@tributary/platforms';
import type { FakeFile } from '@tributary/testkit';
import { shownText, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  postDiscordForwarded,
  postSlackEvent,
  STACK_SECRETS,
  type Stack,
  startStack,
} from './stack-fixture.js';

/** A real 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const NOTES = 'build failed at step 3\nsee the log\n';
const MAX_BYTES = 4096;
const NOTE = 'Tributary could not fetch this file for the agent:';

let stack: Stack;
let png: FakeFile;
let notes: FakeFile;
let big: FakeFile;
/** The same files' paths on a host that is not the platform's. */
let foreignOrigin: string;

beforeAll(async () => {
  stack = await startStack({ ATTACHMENT_MAX_BYTES: String(MAX_BYTES), REPLY_STREAM_INTERVAL_MS: '0' });
  png = stack.api.seedFile({ name: 'chart.png', bytes: PNG, contentType: 'image/png' });
  notes = stack.api.seedFile({ name: 'notes.txt', bytes: Buffer.from(NOTES), contentType: 'text/plain' });
  big = stack.api.seedFile({
    name: 'big.txt',
    bytes: Buffer.alloc(MAX_BYTES * 2, 'x'),
    contentType: 'text/plain',
  });
  // The fake itself, under another name: only the name differs, so only the allow-list can refuse it.
  foreignOrigin = stack.api.origin.replace('127.0.0.1', 'localhost');
}, 60_000);
afterAll(() => stack.close());

const foreign = (url: string) => url.replace(stack.api.origin, foreignOrigin);
const foreignHost = () => new URL(foreignOrigin).host;

/**
 * A list item of the built-in agent's report, as each platform shows it: a Markdown `-` where the
 * platform renders Markdown itself (Discord, gateways), a `•` where it was converted (Slack, Telegram).
 */
function expectItem(reply: string, item: string) {
  expect(
    reply
      .split('\n')
      .map((line) => line.replace(/^ +[-•] /, ''))
      .filter((line) => line === item),
  ).toEqual([item]);
}

/** What the built-in agent reports for the PNG, the text file, the oversized file and a foreign URL. */
function expectReport(reply: string, names: { image: string }) {
  expectItem(reply, `image ${names.image} (image/png, ${PNG.length} bytes)`);
  expectItem(reply, `file notes.txt (text/plain): ${JSON.stringify(NOTES)}`);
  expectItem(reply, `link big.txt (note: ${NOTE} the file is larger than the 4 KiB limit.)`);
}

function expectForeignRefused(reply: string) {
  expectItem(reply, `link elsewhere.png (note: ${NOTE} ${foreignHost()} is not this platform's file host.)`);
}

async function replyWhere(platform: string, method: string, match: (body: unknown) => string | undefined) {
  let text: string | undefined;
  await waitFor(
    () => {
      text = stack
        .calls(platform, method)
        .map((call) => match(call.body))
        .find((body) => body?.includes('image '));
      return text !== undefined;
    },
    { what: `a ${platform} reply describing the attachments`, timeoutMs: 30_000 },
  );
  return text!;
}

describe('attachments reach the agent as content, through each platform', () => {
  it('Slack: url_private fetched with the bot token; oversized and foreign files become notes', async () => {
    const channel = 'CFILES';
    const ts = '1735723800.000100';
    const slackFile = (id: string, file: FakeFile, name: string, mimetype: string, url = file.slackUrl) => ({
      id,
      name,
      title: name,
      mimetype,
      filetype: name.split('.').pop(),
      size: file.size,
      url_private: url,
      url_private_download: `${url}?download=1`,
    });
    const event = {
      type: 'message',
      subtype: 'file_share',
      channel,
      channel_type: 'channel',
      user: 'U1',
      text: '<@UBOT> what do these say?',
      ts,
      files: [
        slackFile('F1', png, 'chart.png', 'image/png'),
        slackFile('F2', notes, 'notes.txt', 'text/plain'),
        slackFile('F3', big, 'big.txt', 'text/plain'),
        slackFile('F4', png, 'elsewhere.png', 'image/png', foreign(png.slackUrl)),
      ],
    };
    const body = JSON.stringify({ type: 'event_callback', team_id: 'T1', event_id: 'EvFILES', event });
    const answer = await postSlackEvent(stack, body);
    expect(answer.body).toMatchObject({ outcome: 'accepted' });

    const reply = await replyWhere('slack', 'chat.postMessage', (b) => {
      const post = b as { channel: string };
      return post.channel === channel ? shownText({ platform: 'slack', body: b }) : undefined;
    });
    expectReport(reply, { image: 'chart.png' });
    expectForeignRefused(reply);
    // The oversized file was declared too large, so it was never downloaded; the foreign one never asked.
    const downloads = stack.calls('slack', 'file').map((call) => call.path);
    expect(downloads.some((path) => path.includes('big.txt'))).toBe(false);
    expect(downloads.every((path) => path.startsWith('/slack/files/'))).toBe(true);
    // The queue keeps where the files are, never their bytes: a re-delivery downloads them again.
    const [record] = await stack.worker.queue.admin.history(`slack:${channel}:${ts}`);
    const stored = arrivalFromBody(record!.messages[0]!.body);
    expect(stored.attachments.map((a) => (a.kind === 'link' ? a.source?.platform : a.kind))).toEqual([
      'slack',
      'slack',
      'slack',
      'slack',
    ]);
    expect(JSON.stringify(record)).not.toContain(PNG.toString('base64'));
  });

  it('Telegram: getFile, then the file from the API host; a photo is sniffed as the PNG it is', async () => {
    const chat = -100_777;
    const from = { id: 42, is_bot: false, first_name: 'Ada', username: 'ada' };
    let id = 500;
    const deliver = (fields: Record<string, unknown>) => {
      id++;
      const body = JSON.stringify({
        update_id: id,
        message: {
          message_id: id,
          date: Math.floor(Date.now() / 1000),
          chat: { id: chat, type: 'group', title: 'team' },
          from,
          ...fields,
        },
      });
      return stack.post('/webhooks/telegram', body, {
        'x-telegram-bot-api-secret-token': STACK_SECRETS.TELEGRAM_SECRET_TOKEN,
      });
    };
    const document = (file: FakeFile, name: string) => ({
      file_name: name,
      mime_type: 'text/plain',
      file_id: file.telegramFileId,
      file_unique_id: `u${file.telegramFileId}`,
      file_size: file.size,
    });
    const photo = {
      caption: '@tributary_bot look',
      caption_entities: [{ type: 'mention', offset: 0, length: 14 }],
      photo: [
        { file_id: png.telegramFileId, file_unique_id: 'p1', width: 1, height: 1, file_size: png.size },
      ],
    };
    expect((await deliver(photo)).body).toMatchObject({ outcome: 'accepted' });
    expect((await deliver({ document: document(notes, 'notes.txt') })).body).toMatchObject({
      outcome: 'accepted',
    });
    expect((await deliver({ document: document(big, 'big.txt') })).body).toMatchObject({
      outcome: 'accepted',
    });

    const replies = () =>
      stack
        .calls('telegram', 'sendMessage')
        .filter((call) => (call.body as { chat_id: number }).chat_id === chat)
        .map((call) => shownText(call))
        .join('\n');
    await waitFor(() => replies().includes('big.txt') && replies().includes('notes.txt'), {
      what: 'replies describing all three files',
      timeoutMs: 30_000,
    });
    // Telegram declares photos as JPEG; the bytes say PNG, and the bytes win.
    expectReport(replies(), { image: 'photo' });
    // The file URL carries the bot token; the log shows it redacted, and only the API host was asked.
    expect(stack.calls('telegram', 'getFile').length).toBeGreaterThanOrEqual(2);
  });

  it('Discord: attachments from the CDN, the type sniffed, not taken from content_type', async () => {
    const thread = '810001';
    const attachment = (id: string, file: FakeFile, filename: string, url = file.discordUrl) => ({
      id,
      filename,
      url,
      proxy_url: url,
      // Discord sometimes knows no type; the bytes decide.
      content_type: 'application/octet-stream',
      size: file.size,
    });
    const body = JSON.stringify({
      schema: 'tributary.discord.forwarded.v1',
      message: {
        id: '710001',
        type: 0,
        channel_id: thread,
        guild_id: '500001',
        author: { id: '42', username: 'ada', global_name: 'Ada' },
        member: { nick: 'Ada L.' },
        content: '<@900> files for you',
        timestamp: new Date().toISOString().replace('Z', '+00:00'),
        mentions: [{ id: '900', username: 'tributary' }],
        attachments: [
          attachment('1', png, 'chart.png'),
          attachment('2', notes, 'notes.txt'),
          attachment('3', big, 'big.txt'),
          attachment('4', png, 'elsewhere.png', foreign(png.discordUrl)),
        ],
      },
      channel: { id: thread, parent_id: '600001', type: 11 },
    });
    const answer = await postDiscordForwarded(stack, body);
    expect(answer.body).toMatchObject({ outcome: 'accepted' });
    const reply = await replyWhere('discord', 'createMessage', (b) => (b as { content: string }).content);
    expectReport(reply, { image: 'chart.png' });
    expectForeignRefused(reply);
  });

  it('gateway: attachment URLs fetched from GATEWAY_FILES_URL only', async () => {
    const gatewayFile = (file: FakeFile, filename: string, type: string, url = file.gatewayUrl) => ({
      type,
      filename,
      mime_type: type === 'image' ? 'image/png' : 'text/plain',
      size: file.size,
      url,
    });
    const body = JSON.stringify({
      schema: 'openab.gateway.event.v1',
      event_id: 'evt_files',
      timestamp: new Date().toISOString(),
      platform: 'line',
      event_type: 'message',
      channel: { id: 'room', type: 'group', thread_id: 'files' },
      sender: { id: 'u1', name: 'ada', display_name: 'Ada', is_bot: false },
      content: {
        type: 'text',
        text: 'files for you',
        attachments: [
          gatewayFile(png, 'chart.png', 'image'),
          gatewayFile(notes, 'notes.txt', 'text_file'),
          gatewayFile(big, 'big.txt', 'text_file'),
          gatewayFile(png, 'elsewhere.png', 'image', foreign(png.gatewayUrl)),
        ],
      },
      mentions: [],
      message_id: 'm-files',
    });
    const answer = await stack.post(
      '/webhooks/gateway',
      body,
      signedRequestHeaders(STACK_SECRETS.GATEWAY_SECRET, body),
    );
    expect(answer.body).toMatchObject({ outcome: 'accepted' });
    const reply = await replyWhere(
      'gateway',
      'reply',
      (b) => (b as { content: { text: string } }).content.text,
    );
    expectReport(reply, { image: 'chart.png' });
    expectForeignRefused(reply);
  });

  it('downloads again for every delivery of a batch the agent failed', async () => {
    const retry = stack.api.seedFile({
      name: 'retry.txt',
      bytes: Buffer.from('again'),
      contentType: 'text/plain',
    });
    const channel = 'CRETRY';
    const event = {
      type: 'message',
      subtype: 'file_share',
      channel,
      channel_type: 'channel',
      user: 'U1',
      text: '<@UBOT> read this\n@agent {"error": "the model is overloaded"}',
      ts: '1735723900.000100',
      files: [
        {
          id: 'F9',
          name: 'retry.txt',
          mimetype: 'text/plain',
          size: retry.size,
          url_private: retry.slackUrl,
        },
      ],
    };
    const body = JSON.stringify({ type: 'event_callback', team_id: 'T1', event_id: 'EvRETRY', event });
    const answer = await postSlackEvent(stack, body);
    expect(answer.body).toMatchObject({ outcome: 'accepted' });
    // Every delivery ends in the agent's error; the last one sets the batch aside with a notice. Each
    // delivery after the first opens a fresh session, in an agent process of its own (a session that
    // had the batch may hold it already): on a loaded machine, three agent starts take a while.
    await waitFor(
      () =>
        stack
          .calls('slack', 'chat.postMessage')
          .some((call) => (call.body as { channel: string; text: string }).channel === channel),
      { what: 'the set-aside notice', timeoutMs: 80_000 },
    );
    const [record] = await stack.worker.queue.admin.history(`slack:${channel}:${event.ts}`);
    expect(record!.deliveries).toBeGreaterThan(1);
    const fetched = stack.calls('slack', 'file').filter((call) => call.path.endsWith('/retry.txt'));
    expect(fetched).toHaveLength(record!.deliveries);
  }, 90_000);

  it('counts every attachment outcome', async () => {
    const metrics = await stack.workerMetrics.registry.getSingleMetricAsString(
      'tributary_attachment_fetches_total',
    );
    const downloaded = stack.calls('slack', 'file').filter((call) => call.status === 200).length;
    expect(metrics).toContain(`platform="slack",outcome="fetched"} ${downloaded}`);
    expect(metrics).toMatch(/platform="slack",outcome="too_large"\} 1/);
    expect(metrics).toMatch(/platform="slack",outcome="refused"\} 1/);
  });
});
