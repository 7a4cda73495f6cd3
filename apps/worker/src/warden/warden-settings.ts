/** What a warden is started with, as JSON in TRIBUTARY_WARDEN (its environment, never its arguments). */
export interface WardenSettings {
  /** The worker's Redis, password included: kept out of the process's arguments, which anyone can list. */
  redisUrl: string;
  /** The worker's presence key (queue `workerKeys(prefix, owner).presence`). */
  presenceKey: string;
  presenceTtlMs: number;
  stallToleranceMs: number;
}

export function parseWardenSettings(raw: string | undefined): WardenSettings {
  const value = JSON.parse(raw ?? '{}') as Partial<WardenSettings>;
  const { redisUrl, presenceKey, presenceTtlMs, stallToleranceMs } = value;
  if (
    typeof redisUrl !== 'string' ||
    typeof presenceKey !== 'string' ||
    !Number.isInteger(presenceTtlMs) ||
    !Number.isInteger(stallToleranceMs)
  ) {
    throw new Error('TRIBUTARY_WARDEN must hold redisUrl, presenceKey, presenceTtlMs and stallToleranceMs');
  }
  return { redisUrl, presenceKey, presenceTtlMs: presenceTtlMs!, stallToleranceMs: stallToleranceMs! };
}
