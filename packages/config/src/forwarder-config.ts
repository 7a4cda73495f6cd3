import {
  type Env,
  type LogLevel,
  readInteger,
  readLogLevel,
  readRequired,
  readString,
  readUrl,
} from './env-readers.js';
import { DEFAULT_INGRESS_PORT } from './ingress-config.js';
import { ALL_INTERFACES, DEFAULT_METRICS_PORT } from './service-settings.js';

export interface ForwarderConfig {
  /** DISCORD_BOT_TOKEN. Named `token` so the shared log redaction (`*.token`) covers it. */
  token: string;
  /** DISCORD_FORWARDER_SECRET, the HMAC key of every forward. Named for the `*.secret` redaction. */
  secret: string;
  /** Base URL of ingress; forwards go to `<forwardUrl>/webhooks/discord/forwarded`. */
  forwardUrl: string;
  /** Connect straight to this Gateway instead of asking the REST API where it is. */
  gatewayUrl: string | undefined;
  /** REST API base without the version; undefined: the library's default (Discord itself). */
  apiUrl: string | undefined;
  logLevel: LogLevel;
  /** `/livez` and `/readyz` (Gateway session up) for the orchestrator's probes; 0: any free port. */
  healthPort: number;
  healthHost: string;
}

/** Variables the forwarder cannot start without, with placeholder values for contract checks. */
export const FORWARDER_REQUIRED = { DISCORD_BOT_TOKEN: 'token', DISCORD_FORWARDER_SECRET: 'secret' } as const;

/** The Discord forwarder's configuration; throws ConfigError naming the first bad variable. */
export function loadForwarderConfig(env: Env): Readonly<ForwarderConfig> {
  return Object.freeze({
    token: readRequired(env, 'DISCORD_BOT_TOKEN', 'the bot token the Gateway connection identifies with'),
    secret: readRequired(env, 'DISCORD_FORWARDER_SECRET', 'the HMAC secret shared with ingress'),
    forwardUrl:
      readUrl(env, 'FORWARD_URL', ['http:', 'https:']) ?? `http://127.0.0.1:${DEFAULT_INGRESS_PORT}`,
    gatewayUrl: readUrl(env, 'DISCORD_GATEWAY_URL', ['ws:', 'wss:']),
    // Ingress and workers take DISCORD_API_URL with its version (`…/api/v10`); the REST library adds
    // the version itself, so the same value serves both.
    apiUrl: readUrl(env, 'DISCORD_API_URL', ['http:', 'https:'])?.replace(/\/v\d+\/?$/, ''),
    logLevel: readLogLevel(env),
    healthPort: readInteger(env, 'METRICS_PORT', DEFAULT_METRICS_PORT, 0, 65_535),
    healthHost: readString(env, 'METRICS_HOST', ALL_INTERFACES),
  });
}
