import { afterEach, describe, expect, it } from 'vitest';
import { type ForwarderHarness, startHarness } from './forwarder-fixture.js';

let harness: ForwarderHarness;
afterEach(() => harness.close());

describe('a Gateway that will not have us', () => {
  it('reports a refusal no reconnect can fix, with what to do about it', async () => {
    harness = await startHarness(
      {},
      {
        prepare: (discord) => {
          discord.refuseIdentifyWith = 4014;
        },
      },
    );

    const error = await harness.forwarder.failure;

    expect(error).toMatchObject({ name: 'GatewayFatalError', closeCode: 4014 });
    expect(error.message).toMatch(/enable the Message Content intent/);
    expect(await harness.logged('gateway connection lost for good')).toMatchObject({ level: 60 });
  });

  it('reports a token the REST API rejects when asked where the Gateway is', async () => {
    harness = await startHarness(
      {},
      {
        env: ({ discord }) => ({
          DISCORD_BOT_TOKEN: 'a-revoked-token',
          DISCORD_GATEWAY_URL: undefined,
          DISCORD_API_URL: discord.apiUrl,
        }),
      },
    );

    const error = await harness.forwarder.failure;

    expect(error.message).toMatch(/401/);
    expect(harness.discord.restAuthorizations).toEqual(['Bot a-revoked-token']);
    expect(harness.discord.identifies).toEqual([]);
  });
});
