import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { messageCreate, TEXT_CHANNEL_ID } from './discord-payloads.js';
import { type ForwarderHarness, startReadyHarness } from './forwarder-fixture.js';

let harness: ForwarderHarness;
afterEach(() => harness.close());

describe('shutting down', () => {
  it('leaves the Gateway and delivers what is still queued before close() resolves', async () => {
    harness = await startReadyHarness({ delivery: { baseDelayMs: 200 } });
    const first = messageCreate(TEXT_CHANNEL_ID, 'was being retried at shutdown');
    const second = messageCreate(TEXT_CHANNEL_ID, 'queued behind it');
    harness.ingress.respond = (forward, attempt) =>
      forward.json.message.id === first.id && attempt === 1 ? { status: 503 } : { status: 200 };
    harness.discord.dispatch('MESSAGE_CREATE', first);
    harness.discord.dispatch('MESSAGE_CREATE', second);
    await waitFor(() => harness.ingress.attempts.length === 1, { what: 'the first attempt failed' });

    await harness.forwarder.close();

    expect(harness.ingress.acceptedIds()).toEqual([first.id, second.id]);
    expect(harness.discord.clientCloseCodes).toEqual([1000]);
    expect(await harness.logged('forwarder stopped')).toMatchObject({ abandoned: 0 });
  });

  it('abandons what it cannot deliver within the grace period, and says how much', async () => {
    harness = await startReadyHarness({ shutdownGraceMs: 200 });
    harness.ingress.respond = () => ({ status: 503 });
    harness.discord.dispatch('MESSAGE_CREATE', messageCreate(TEXT_CHANNEL_ID, 'ingress never recovers'));
    await waitFor(() => harness.ingress.attempts.length >= 1);

    await harness.forwarder.close();

    expect(await harness.logged('shutdown grace period over: messages not forwarded')).toMatchObject({
      level: 50,
      abandoned: 1,
    });
    expect(harness.ingress.accepted).toEqual([]);
  });
});
