import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { messageCreate, OTHER_CHANNEL_ID, TEXT_CHANNEL_ID } from './discord-payloads.js';
import { type ForwarderHarness, startReadyHarness } from './forwarder-fixture.js';

let harness: ForwarderHarness;
afterEach(() => harness.close());

describe('delivery to ingress', () => {
  it('retries 5xx, delivers the message once, and keeps later messages of the channel behind it', async () => {
    harness = await startReadyHarness();
    const first = messageCreate(TEXT_CHANNEL_ID, 'first');
    const second = messageCreate(TEXT_CHANNEL_ID, 'second');
    const third = messageCreate(TEXT_CHANNEL_ID, 'third');
    harness.ingress.respond = (forward, attempt) =>
      forward.json.message.id === first.id && attempt <= 2 ? { status: 503 } : { status: 200 };
    for (const message of [first, second, third]) harness.discord.dispatch('MESSAGE_CREATE', message);

    await waitFor(() => harness.ingress.accepted.length === 3, { what: 'three messages accepted' });
    expect(harness.ingress.acceptedIds()).toEqual([first.id, second.id, third.id]);
    expect(harness.ingress.attempts.map((forward) => forward.json.message.id)).toEqual([
      first.id,
      first.id,
      first.id,
      second.id,
      third.id,
    ]);
  });

  it('does not hold up other channels while one is retrying', async () => {
    harness = await startReadyHarness();
    const stuck = messageCreate(TEXT_CHANNEL_ID, 'ingress keeps failing this one');
    const other = messageCreate(OTHER_CHANNEL_ID, 'another channel');
    let recovered = false;
    harness.ingress.respond = (forward) =>
      forward.json.message.id === stuck.id && !recovered ? { status: 500 } : { status: 200 };
    harness.discord.dispatch('MESSAGE_CREATE', stuck);
    await waitFor(() => harness.ingress.attempts.length >= 2, { what: 'the stuck message retried' });
    harness.discord.dispatch('MESSAGE_CREATE', other);

    await waitFor(() => harness.ingress.accepted.length === 1, { what: 'the other channel delivered' });
    expect(harness.ingress.acceptedIds()).toEqual([other.id]);
    recovered = true;
    await waitFor(() => harness.ingress.accepted.length === 2, { what: 'the stuck message delivered' });
    expect(harness.ingress.acceptedIds()).toEqual([other.id, stuck.id]);
  });

  it('honours Retry-After on 429 rather than its own backoff', async () => {
    // A backoff this long would outlast waitFor; only the one-second Retry-After gets the message through.
    harness = await startReadyHarness({ delivery: { baseDelayMs: 120_000, maxDelayMs: 120_000 } });
    const message = messageCreate(TEXT_CHANNEL_ID, 'rate limited');
    harness.ingress.respond = (_forward, attempt) =>
      attempt === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 };
    harness.discord.dispatch('MESSAGE_CREATE', message);

    await waitFor(() => harness.ingress.accepted.length === 1, { what: 'delivery after Retry-After' });
    const retry = await harness.logged('forward failed; retrying');
    expect(retry).toMatchObject({ messageId: message.id, reason: 'rate limited (429)' });
    // The advised wait plus a little spread, so forwarders told the same Retry-After do not return at once.
    expect(retry.delayMs).toBeGreaterThanOrEqual(1_000);
    expect(retry.delayMs).toBeLessThanOrEqual(1_250);
  });

  it('drops a message ingress refuses with a 4xx, says so, and goes on with the next', async () => {
    harness = await startReadyHarness();
    const refused = messageCreate(TEXT_CHANNEL_ID, 'ingress says this is malformed');
    const next = messageCreate(TEXT_CHANNEL_ID, 'fine');
    harness.ingress.respond = (forward) =>
      forward.json.message.id === refused.id ? { status: 400 } : { status: 200 };
    harness.discord.dispatch('MESSAGE_CREATE', refused);
    harness.discord.dispatch('MESSAGE_CREATE', next);

    await waitFor(() => harness.ingress.accepted.length === 1);
    expect(harness.ingress.acceptedIds()).toEqual([next.id]);
    expect(harness.ingress.attempts.filter((forward) => forward.json.message.id === refused.id)).toHaveLength(
      1,
    );
    const line = await harness.logged(
      'ingress refused the forwarded message: dropped, a retry would be refused too',
    );
    expect(line).toMatchObject({ level: 50, messageId: refused.id, channelId: TEXT_CHANNEL_ID, status: 400 });
  });

  it('drops new messages loudly when the queue is full, and takes messages again once it drains', async () => {
    harness = await startReadyHarness({ delivery: { capacity: 1 } });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = messageCreate(TEXT_CHANNEL_ID, 'in flight');
    const overflow = messageCreate(OTHER_CHANNEL_ID, 'no room');
    const later = messageCreate(OTHER_CHANNEL_ID, 'room again');
    harness.ingress.respond = async (forward) => {
      if (forward.json.message.id === first.id) await held;
      return { status: 200 };
    };
    harness.discord.dispatch('MESSAGE_CREATE', first);
    await waitFor(() => harness.ingress.attempts.length === 1, { what: 'the first message in flight' });
    harness.discord.dispatch('MESSAGE_CREATE', overflow);

    const line = await harness.logged(
      'FORWARD QUEUE FULL: message dropped; ingress is down or not keeping up',
    );
    expect(line).toMatchObject({ level: 50, messageId: overflow.id, capacity: 1 });
    release();
    await waitFor(() => harness.ingress.accepted.length === 1);
    harness.discord.dispatch('MESSAGE_CREATE', later);
    await waitFor(() => harness.ingress.accepted.length === 2);
    expect(harness.ingress.acceptedIds()).toEqual([first.id, later.id]);
  });

  it('keeps at most maxInFlight posts open across channels', async () => {
    harness = await startReadyHarness({ delivery: { maxInFlight: 2 } });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    harness.ingress.respond = async () => {
      await held;
      return { status: 200 };
    };
    const messages = ['810000000000000101', '810000000000000102', '810000000000000103'].map((channel) =>
      messageCreate(channel, 'one of three channels'),
    );
    for (const message of messages) harness.discord.dispatch('MESSAGE_CREATE', message);
    await waitFor(() => harness.ingress.attempts.length === 2, { what: 'two posts open' });

    release();

    await waitFor(() => harness.ingress.accepted.length === 3, { what: 'all three delivered' });
    expect(harness.ingress.peakConcurrency).toBe(2);
  });
});
