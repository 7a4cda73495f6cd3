import type { ArrivalEvent } from '@tributary/packing';
import { type FakePlatformApi, startFakePlatformApi, waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { appendOnlyFiles, message, startHarness, type WorkerHarness } from './worker-fixture.js';

let h: WorkerHarness | undefined;
let api: FakePlatformApi | undefined;
afterEach(async () => {
  await h?.close();
  await api?.close();
  h = undefined;
  api = undefined;
  delete process.env.TRIBUTARY_CANARY_AGENT_KEY;
});

// A canary in every secret variable a worker may hold; none looks like a credential, so only knowing the
// value can blank it.
const OWN = {
  SLACK_SIGNING_SECRET: 'canary1slacksign-4b1d9e7f02',
  SLACK_BOT_TOKEN: 'canary2slackbot-8c2e5a1f93',
  TELEGRAM_SECRET_TOKEN: 'canary3telegramverify-6d0f3b8a',
  TELEGRAM_BOT_TOKEN: 'canary4telegrambot-1e7c4f9b25',
  DISCORD_BOT_TOKEN: 'canary5discordbot-3a9d6e2c71',
  DISCORD_FORWARDER_SECRET: 'canary6forwarder-5f8b1c4e0d',
  GATEWAY_SECRET: 'canary7gateway-9e3a7d1b46',
  METRICS_TOKEN: 'canary8metrics-2c6f0a8e5b',
  ADMIN_TOKEN: 'canary9admin-7b4e1d9c3f',
};
const ADMIN_TOKENS_TOKEN = 'canary10admins-0d5a8f2e6c';
// What the agent is handed: a variable AGENT_ENV names, one the caller sets, an MCP server's.
const AGENT_KEY = 'canary11agentkey-4f2a9c7e1d';
const GIVEN = 'canary12given-8e1b5d3a6f';
const MCP = 'canary13mcp-6a3f9e0c2b';

/**
 * The script as an `@agent` line that does not spell the canaries (each character a JSON escape), so
 * that only the agent's output can carry them anywhere.
 */
function agentLine(script: object, canaries: readonly string[]): string {
  let json = JSON.stringify(script);
  for (const canary of canaries) {
    const escaped = [...canary].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    json = json.replaceAll(canary, escaped.join(''));
  }
  return `@agent ${json}`;
}

function slackMessage(channel: string, text: string): ArrivalEvent {
  const { threadId: _, ...event } = message(text);
  return { ...event, platform: 'slack', channelId: channel };
}

/** `text` laid out so that the second of two equal chunks starts in the middle of `secret`. */
function splitAcross(secret: string): string {
  const before = 'The value you asked for: ';
  const middle = before.length + Math.floor(secret.length / 2);
  return `${before}${secret}${' (keep it safe)'.padEnd(2 * middle - before.length - secret.length, '.')}`;
}

describe('an agent asked to print the secrets it knows', () => {
  it('shows none of them on the platform, in history, dead letters, Redis or the log', async () => {
    process.env.TRIBUTARY_CANARY_AGENT_KEY = AGENT_KEY;
    api = await startFakePlatformApi({
      tokens: {
        slack: OWN.SLACK_BOT_TOKEN,
        telegram: OWN.TELEGRAM_BOT_TOKEN,
        discord: OWN.DISCORD_BOT_TOKEN,
      },
      gatewaySecret: OWN.GATEWAY_SECRET,
    });
    const mcpServers = [
      { name: 'tools', command: '/bin/true', args: [], env: [{ name: 'TOOLS', value: MCP }] },
    ];
    h = await startHarness(
      {
        ...OWN,
        ADMIN_TOKENS: `ops:act:${ADMIN_TOKENS_TOKEN}`,
        SLACK_API_URL: api.urls.slack,
        TELEGRAM_API_URL: api.urls.telegram,
        DISCORD_API_URL: api.urls.discord,
        GATEWAY_REPLY_URL: api.urls.gatewayReply,
        AGENT_ENV: 'TRIBUTARY_CANARY_AGENT_KEY',
        AGENT_MCP_SERVERS: JSON.stringify(mcpServers),
        REPLY_STREAM_INTERVAL_MS: '200',
      },
      {},
      {
        redis: { private: true, appendfsync: 'always' },
        agentEnv: { GIVEN_VALUE: GIVEN, SHORT_VALUE: 'teal' },
      },
    );
    const redisPassword = h.redis.options.password!;
    expect(redisPassword.length).toBeGreaterThanOrEqual(16);
    const canaries = [...Object.values(OWN), ADMIN_TOKENS_TOKEN, AGENT_KEY, GIVEN, MCP, redisPassword];

    // Streamed: a plan and a tool whose title is clipped in the middle of a secret, and a reply whose
    // second chunk comes long after the first ended halfway through one.
    const title = `${'x'.repeat(119 - 'running: '.length - 20)}${GIVEN}`;
    const streamed = slackMessage(
      'CSTREAM',
      agentLine(
        {
          plan: [`Read ${OWN.SLACK_BOT_TOKEN} from the environment`],
          toolTitles: [`curl -u ${redisPassword}`, title],
          reply: splitAcross(OWN.ADMIN_TOKEN),
          chunks: 2,
          chunkDelayMs: 1500,
        },
        canaries,
      ),
    );
    // Every value in one reply, beside its own variables and MCP servers as the agent reports them.
    const listed = slackMessage(
      'CLIST',
      agentLine(
        {
          reply: `Here they are: ${canaries.join(', ')}; and teal is a colour.`,
          env: ['TRIBUTARY_CANARY_AGENT_KEY', 'GIVEN_VALUE'],
          reportSession: true,
        },
        canaries,
      ),
    );
    const failing = slackMessage(
      'CFAIL',
      agentLine({ error: `upstream refused ${AGENT_KEY} and ${OWN.GATEWAY_SECRET}` }, canaries),
    );
    const events = [streamed, listed, failing];
    const threads = events.map((event) => `slack:${event.channelId}:${event.eventId}`);
    for (const [index, event] of events.entries()) await h.send(threads[index]!, event);

    const texts = (thread: number) =>
      api!
        .calls()
        .filter((c) => c.method === 'chat.postMessage' || c.method === 'chat.update')
        .map((c) => c.body as { channel: string; text: string })
        .filter((body) => body.channel === events[thread]!.channelId)
        .map((body) => body.text);
    await waitFor(
      () => texts(0).some((text) => text.startsWith('The value you asked for') && !text.endsWith(' …')),
      {
        what: 'the streamed reply, final',
      },
    );
    await waitFor(() => texts(1).some((text) => text.includes('teal is a colour')), {
      what: 'the listed reply',
    });
    await waitFor(async () => (await h!.worker.queue.admin.deadLetters(threads[2]!)).length === 1, {
      what: 'the failing batch set aside',
    });
    await waitFor(() => texts(2).some((text) => text.includes('reported an error')), { what: 'the notice' });

    // What was blanked shows as blanked; the rest, short values included, as the agent wrote it.
    const streamedTexts = texts(0);
    expect(
      streamedTexts.some((text) => text.startsWith('The value you asked for: ') && text.endsWith(' …')),
    ).toBe(true);
    // Only the latest tool shows in the stream; each shows in the progress signals.
    expect(
      streamedTexts.some((text) => text.includes(`⏳ running: ${title.replace(GIVEN, '[redacted]')}`)),
    ).toBe(true);
    expect(h.signals.map((signal) => signal.activity)).toContain(`running: curl -u [redacted]`);
    expect(streamedTexts.at(-1)).toBe(splitAcross(OWN.ADMIN_TOKEN).replace(OWN.ADMIN_TOKEN, '[redacted]'));
    expect(texts(1).at(-1)).toContain(
      `Here they are: ${canaries.map(() => '[redacted]').join(', ')}; and teal`,
    );
    const [history] = await h.worker.queue.admin.history(threads[1]!);
    expect(history!.reply).toContain('env GIVEN_VALUE=[redacted]');
    const [deadLetter] = await h.worker.queue.admin.deadLetters(threads[2]!);
    expect(deadLetter!.reason).toContain('upstream refused [redacted] and [redacted]');

    const histories = await Promise.all(threads.map((thread) => h!.worker.queue.admin.history(thread)));
    const deadLetters = await Promise.all(threads.map((thread) => h!.worker.queue.admin.deadLetters(thread)));
    const everywhere = {
      platform: JSON.stringify(api.calls()),
      history: JSON.stringify(histories),
      deadLetters: JSON.stringify(deadLetters),
      redis: await appendOnlyFiles(h),
      log: JSON.stringify(h.logs),
      signals: JSON.stringify(h.signals),
    };
    for (const [where, text] of Object.entries(everywhere)) {
      for (const canary of canaries) {
        expect(text, `${canary} in ${where}`).not.toContain(canary);
        // Not even its first half: a stream or a clipped line must not show a secret in part.
        expect(text, `half of ${canary} in ${where}`).not.toContain(canary.slice(0, canary.length / 2));
      }
    }
  });
});
