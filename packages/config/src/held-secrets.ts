import { redisAddress } from '@tributary/queue/address';
import { readAdminTokens } from './admin-config.js';
import type { Env } from './env-readers.js';
import type { PlatformConfig } from './platform-config.js';

interface OwnSecrets {
  redisUrl: string;
  platforms: PlatformConfig;
  metricsToken: string | undefined;
}

/**
 * The credential values in a worker's environment: its own (bot tokens, the Redis password,
 * METRICS_TOKEN) and those meant for ingress (signing secrets, admin tokens), which deployments hand
 * workers too because both take the one Secret. The worker blanks each of them from whatever its
 * agents say.
 */
export function readHeldSecrets(env: Env, own: OwnSecrets): string[] {
  const { slack, telegram, discord, gateway } = own.platforms;
  const values = [
    slack?.signingSecret,
    slack?.botToken,
    ...(slack?.teamTokens?.values() ?? []),
    telegram?.secretToken,
    telegram?.botToken,
    discord?.forwarderSecret,
    discord?.botToken,
    gateway?.secret,
    own.metricsToken,
    ...redisPasswords(own.redisUrl),
    ...readAdminTokens(env).map((admin) => admin.token),
  ];
  return [...new Set(values.filter((value): value is string => value !== undefined && value !== ''))];
}

/** The Redis password both as REDIS_URL spells it (percent-encoded) and as it is sent. */
function redisPasswords(url: string): string[] {
  const address = redisAddress(url);
  if (address.kind === 'cluster') return address.password === undefined ? [] : [address.password];
  const spelled = new URL(url).password;
  return [spelled, decoded(spelled)];
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // Not valid percent-encoding: the URL carries it as it is.
    return text;
  }
}
