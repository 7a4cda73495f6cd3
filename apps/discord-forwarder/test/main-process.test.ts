import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { messageCreate, TEXT_CHANNEL_ID } from './discord-payloads.js';
import { FakeDiscord } from './fake-discord.js';
import { SECRET, TOKEN } from './forwarder-fixture.js';
import { type ForwarderProcess, spawnForwarder } from './forwarder-process.js';
import { IngressReceiver } from './ingress-receiver.js';

let discord: FakeDiscord;
let ingress: IngressReceiver;
let forwarder: ForwarderProcess | undefined;

afterEach(async () => {
  if (forwarder?.child.exitCode === null) {
    forwarder.child.kill('SIGKILL');
    await forwarder.exited;
  }
  forwarder = undefined;
  await ingress.stop();
  await discord.stop();
});

async function startFakes(): Promise<Record<string, string>> {
  discord = await FakeDiscord.start(TOKEN);
  ingress = await IngressReceiver.start(SECRET);
  // The REST route tells the process where the Gateway is, as Discord's does.
  return {
    DISCORD_BOT_TOKEN: TOKEN,
    DISCORD_FORWARDER_SECRET: SECRET,
    FORWARD_URL: ingress.url,
    DISCORD_API_URL: discord.apiUrl,
    LOG_LEVEL: 'debug',
  };
}

describe('main.ts as a process', () => {
  it('forwards a message, stops on SIGTERM with exit 0, and never prints the token or the secret', async () => {
    forwarder = spawnForwarder(await startFakes());
    const running = forwarder;
    await waitFor(() => running.stdout().includes('"gateway session ready"'), {
      what: 'the Gateway session',
    });
    const message = messageCreate(TEXT_CHANNEL_ID, 'from a real process');
    discord.dispatch('MESSAGE_CREATE', message);
    await waitFor(() => ingress.accepted.length === 1, { what: 'the forward' });

    running.child.kill('SIGTERM');

    expect(await running.exited).toEqual({ code: 0, signal: null });
    expect(ingress.acceptedIds()).toEqual([message.id]);
    expect(discord.restAuthorizations).toEqual([`Bot ${TOKEN}`]);
    expect(discord.clientCloseCodes).toEqual([1000]);
    const output = running.stdout() + running.stderr();
    expect(output).toContain('"forwarder stopped"');
    expect(output).not.toContain(TOKEN);
    expect(output).not.toContain(SECRET);
  });

  it('serves /livez and, once its Gateway session is up, /readyz, for the probes', async () => {
    forwarder = spawnForwarder(await startFakes());
    const running = forwarder;
    await waitFor(() => running.stdout().includes('"health endpoints up"'), { what: 'the health server' });
    const line = running
      .stdout()
      .split('\n')
      .find((l) => l.includes('"health endpoints up"'))!;
    const health = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
    expect((await fetch(`${health}/livez`)).status).toBe(200);
    await waitFor(() => running.stdout().includes('"gateway session ready"'), {
      what: 'the Gateway session',
    });
    await waitFor(async () => (await fetch(`${health}/readyz`)).status === 200, { what: 'ready' });
    running.child.kill('SIGTERM');
    await running.exited;
  });

  it('exits 1 naming a missing required variable', async () => {
    const { DISCORD_FORWARDER_SECRET: _omitted, ...env } = await startFakes();
    forwarder = spawnForwarder(env);

    expect(await forwarder.exited).toEqual({ code: 1, signal: null });
    expect(forwarder.stderr()).toMatch(/configuration error: DISCORD_FORWARDER_SECRET: is required/);
    expect(forwarder.stdout() + forwarder.stderr()).not.toContain(TOKEN);
    expect(discord.restAuthorizations).toEqual([]);
  });

  it('exits 1 with the fix when the Gateway refuses the intents', async () => {
    const env = await startFakes();
    discord.refuseIdentifyWith = 4014;
    forwarder = spawnForwarder(env);

    expect(await forwarder.exited).toEqual({ code: 1, signal: null });
    expect(forwarder.stderr()).toMatch(/code 4014: disallowed intents: enable the Message Content intent/);
    expect(forwarder.stdout() + forwarder.stderr()).not.toContain(TOKEN);
  });
});
