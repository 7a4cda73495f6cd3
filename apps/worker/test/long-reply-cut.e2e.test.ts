import type { ArrivalEvent } from '@tributary/packing';
import { type FakePlatformApi, startFakePlatformApi, waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { message, metric, startHarness, type WorkerHarness } from './worker-fixture.js';

let h: WorkerHarness | undefined;
let api: FakePlatformApi | undefined;
afterEach(async () => {
  await h?.close();
  await api?.close();
  h = undefined;
  api = undefined;
});

const LINE = 'All work and no play makes Jack a dull boy. ';
/** Slack's limit as the worker's Slack client splits replies. */
const SLACK_LIMIT = 4000;

function slackMessage(channel: string, text: string): ArrivalEvent {
  const { threadId: _, ...event } = message(text);
  return { ...event, platform: 'slack', channelId: channel };
}

describe('a reply longer than REPLY_MAX_PARTS messages', () => {
  it('is cut there with a notice of what was left out, kept whole in history, logged and counted', async () => {
    api = await startFakePlatformApi();
    h = await startHarness({
      SLACK_BOT_TOKEN: api.tokens.slack,
      SLACK_API_URL: api.urls.slack,
      REPLY_MAX_PARTS: '3',
      REPLY_STREAM_INTERVAL_MS: '0',
    });
    const long = slackMessage('CLONG', `@agent {"reply": "${LINE}", "replyRepeat": 25000}`);
    const fits = slackMessage('CFITS', `@agent {"reply": "${LINE}", "replyRepeat": 150}`);
    const longThread = `slack:CLONG:${long.eventId}`;
    await h.send(longThread, long);
    await h.send(`slack:CFITS:${fits.eventId}`, fits);

    const posted = (channel: string) =>
      api!
        .calls()
        .filter((c) => c.method === 'chat.postMessage')
        .map((c) => c.body as { channel: string; text: string })
        .filter((body) => body.channel === channel)
        .map((body) => body.text);
    const notice =
      /\n\n✂️ This reply was too long to post whole, so it was cut here: the last ([\d,]+) characters were left out\. An operator can read all of it in the thread's history\.$/;
    await waitFor(() => posted('CLONG').some((text) => notice.test(text)), { what: 'the cut reply' });
    await waitFor(() => posted('CFITS').length === 2, { what: 'the reply that fits' });

    const parts = posted('CLONG');
    expect(parts).toHaveLength(3);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(SLACK_LIMIT);
    const leftOut = Number(notice.exec(parts[2]!)![1]!.replaceAll(',', ''));
    const [record] = await h.worker.queue.admin.history(longThread);
    const full = LINE.repeat(25000);
    expect(record!.reply).toBe(full);
    // The parts are the reply's start up to the cut (the whitespace at each split dropped), nearly full.
    const shown = parts.join(' ').replace(notice, '');
    expect(shown.replace(/\s+/g, ' ').trim()).toBe(
      full
        .slice(0, full.length - leftOut)
        .replace(/\s+/g, ' ')
        .trim(),
    );
    expect(full.length - leftOut).toBeGreaterThan(3 * SLACK_LIMIT - 400);

    const cut = h.logs.find(
      (line) => line.msg === 'reply cut at REPLY_MAX_PARTS messages; the batch history keeps all of it',
    );
    expect(cut).toMatchObject({
      level: 40,
      thread: longThread,
      maxParts: 3,
      replyChars: full.length,
      leftOutChars: leftOut,
    });
    expect(await metric(h, 'tributary_replies_cut_total{platform="slack"}')).toBe(1);
    expect(posted('CFITS').some((text) => text.includes('✂️'))).toBe(false);
  });
});
