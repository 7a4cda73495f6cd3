/** What a warden is started with, as JSON in TRIBUTARY_WARDEN (its environment, never its arguments). */
export interface WardenSettings {
  /** The worker's Redis, password included: kept out of the process's arguments, which anyone can list. */
  redisUrl: string;
  /** The queue's key prefix and the worker's owner id: whose presence this is. */
  prefix: string;
  owner: string;
  presenceTtlMs: number;
  stallToleranceMs: number;
}

export function parseWardenSettings(raw: string | undefined): WardenSettings {
  const value = JSON.parse(raw ?? '{}') as Partial<WardenSettings>;
  const { redisUrl, prefix, owner, presenceTtlMs, stallToleranceMs } = value;
  if (
    typeof redisUrl !== 'string' ||
    typeof prefix !== 'string' ||
    typeof owner !== 'string' ||
    !Number.isInteger(presenceTtlMs) ||
    !Number.isInteger(stallToleranceMs)
  ) {
    throw new Error('TRIBUTARY_WARDEN must hold redisUrl, prefix, owner, presenceTtlMs and stallToleranceMs');
  }
  return { redisUrl, prefix, owner, presenceTtlMs: presenceTtlMs!, stallToleranceMs: stallToleranceMs! };
}
