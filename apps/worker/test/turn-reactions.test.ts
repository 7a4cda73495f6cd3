import { GatewayClient, type PlatformClient } from '@tributary/platforms';
import { type FakePlatformApi, startFakePlatformApi, waitFor } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnReactions } from '../src/turns/turn-reactions.js';
import type { TurnSignal } from '../src/turns/turn-signals.js';

// Progress reactions through the real gateway client to the fake reply receiver, over HTTP.
const SECRET = 'reactions-s3cret';
const DELAY_MS = 300;
let fake: FakePlatformApi;
let clients: Map<string, PlatformClient>;

beforeAll(async () => {
  fake = await startFakePlatformApi({ gatewaySecret: SECRET });
  clients = new Map([['gateway', new GatewayClient({ replyUrl: fake.urls.gatewayReply, secret: SECRET })]]);
});
afterAll(() => fake.close());

let batches = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A batch of its own, its signals, and the reaction commands its trailing message received. */
function batch(delayMs = DELAY_MS) {
  const reactions = new TurnReactions(clients, pino({ level: 'silent' }), delayMs);
  const batchId = `batch-${++batches}`;
  const messageId = `m-${batches}`;
  const signal = (kind: TurnSignal['kind'], more: Partial<TurnSignal> = {}) =>
    reactions.listener({
      kind,
      thread: `gateway:telegram:-1001:${batches}`,
      batchId,
      target: { platform: 'telegram', channelId: '-1001', messageId: messageId },
      ...more,
    });
  const commands = () =>
    fake
      .calls()
      .map((call) => call.body as { command?: string; reply_to?: string; content?: { text: string } })
      .filter((body) => body.reply_to === messageId && body.command?.endsWith('_reaction'))
      .map((body) => `${body.command === 'add_reaction' ? '+' : '-'}${body.content!.text}`);
  /** The commands once the first has arrived and a 'working' reaction still waiting would have shown. */
  const settled = async (what: string) => {
    await waitFor(() => commands().length > 0 || undefined, { what });
    await sleep(DELAY_MS + 100);
    return commands();
  };
  return { signal, commands, settled };
}

describe('progress reactions of a running turn', () => {
  it('shows only ✅ on a turn that answers before the working delay', async () => {
    const { signal, settled } = batch();
    signal('started');
    await sleep(20);
    signal('finished', { ending: 'answered' });
    expect(await settled('the done reaction')).toEqual(['+✅']);
  });

  it('shows ⚙️ once the turn outlasts the delay, and swaps it for ✅ at the end', async () => {
    const { signal, commands } = batch();
    signal('started');
    await waitFor(() => commands().length > 0 || undefined, { what: 'the working reaction' });
    expect(commands()).toEqual(['+⚙️']);
    signal('finished', { ending: 'answered' });
    await waitFor(() => commands().length === 3 || undefined, { what: 'the working reaction swapped' });
    expect(commands()).toEqual(['+⚙️', '-⚙️', '+✅']);
  });

  it('shows a tool at once, and no ⚙️ after it', async () => {
    const { signal, settled } = batch();
    signal('started');
    signal('progress', { activity: 'running: Read src/index.ts' });
    expect(await settled('the tool reaction')).toEqual(['+🔧']);
  });

  it('shows nothing of a turn handed to another worker before the delay', async () => {
    const { signal, commands } = batch();
    signal('started');
    signal('finished', { ending: 'handed-over' });
    await sleep(DELAY_MS + 100);
    expect(commands()).toEqual([]);
  });

  it('shows ⚙️ at the start when the delay is 0', async () => {
    const { signal, commands } = batch(0);
    signal('started');
    signal('finished', { ending: 'answered' });
    await waitFor(() => commands().length === 3 || undefined, { what: 'three reaction commands' });
    expect(commands()).toEqual(['+⚙️', '-⚙️', '+✅']);
  });
});
