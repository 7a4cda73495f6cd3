import { loadForwarderConfig } from '@tributary/config';
import { createLogger } from '@tributary/observability';
import { waitFor } from '@tributary/testkit';
import { type Forwarder, type ForwarderOptions, startForwarder } from '../src/forwarder.js';
import { FakeDiscord } from './fake-discord.js';
import { IngressReceiver } from './ingress-receiver.js';

export const TOKEN = 'bot-token-never-logged-4f1c';
export const SECRET = 'forwarder-secret-never-logged-9b7e';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A forwarder in this process between a fake Discord and a fake ingress, with its logs captured. */
export interface ForwarderHarness {
  discord: FakeDiscord;
  ingress: IngressReceiver;
  forwarder: Forwarder;
  logs: LogLine[];
  /** Resolves with the first log line matching, waiting for it. */
  logged(msg: string, match?: (line: LogLine) => boolean): Promise<LogLine>;
  close(): Promise<void>;
}

export interface HarnessSetup {
  /** Variables on top of the defaults (which pin the Gateway URL, so REST is not asked). */
  env?: (fakes: { discord: FakeDiscord }) => Record<string, string | undefined>;
  /** Runs before the forwarder starts. */
  prepare?: (discord: FakeDiscord) => void;
}

export async function startHarness(
  options: Omit<ForwarderOptions, 'logger'> = {},
  setup: HarnessSetup = {},
): Promise<ForwarderHarness> {
  const discord = await FakeDiscord.start(TOKEN);
  setup.prepare?.(discord);
  const ingress = await IngressReceiver.start(SECRET);
  const logs: LogLine[] = [];
  const logger = createLogger('debug', { write: (line: string) => void logs.push(JSON.parse(line)) });
  const config = loadForwarderConfig({
    DISCORD_BOT_TOKEN: TOKEN,
    DISCORD_FORWARDER_SECRET: SECRET,
    FORWARD_URL: ingress.url,
    DISCORD_GATEWAY_URL: discord.gatewayUrl,
    ...setup.env?.({ discord }),
  });
  const forwarder = startForwarder(config, {
    ...options,
    logger,
    delivery: { baseDelayMs: 20, ...options.delivery },
  });
  const logged = (msg: string, match: (line: LogLine) => boolean = () => true) =>
    waitFor(() => logs.find((line) => line.msg === msg && match(line)), { what: `log "${msg}"` });
  return {
    discord,
    ingress,
    forwarder,
    logs,
    logged,
    async close() {
      await forwarder.close();
      await ingress.stop();
      await discord.stop();
    },
  };
}

/** Starts a harness and waits until the forwarder has its Gateway session (so it knows its own user). */
export async function startReadyHarness(
  options: Omit<ForwarderOptions, 'logger'> = {},
): Promise<ForwarderHarness> {
  const harness = await startHarness(options);
  await harness.logged('gateway session ready');
  return harness;
}
