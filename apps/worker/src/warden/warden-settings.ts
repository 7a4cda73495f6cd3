/** What a warden is started with, as JSON in TRIBUTARY_WARDEN (its environment, never its arguments). */
export interface WardenSettings {
  /** The worker's Redis, password included: kept out of the process's arguments, which anyone can list. */
  redisUrl: string;
  /** The queue's key prefix and the worker's owner id: whose presence this is. */
  prefix: string;
  owner: string;
  presenceTtlMs: number;
  stallToleranceMs: number;
  /** The value announced until the worker pulses another (PRESENCE in the queue). */
  presence: string;
  /** The agent host whose lease the warden holds, when the agents run in a container of their own. */
  agentHostSocket?: string;
}

export function parseWardenSettings(raw: string | undefined): WardenSettings {
  const value = JSON.parse(raw ?? '{}') as Partial<WardenSettings>;
  const { redisUrl, prefix, owner, presenceTtlMs, stallToleranceMs, presence, agentHostSocket } = value;
  if (
    typeof redisUrl !== 'string' ||
    typeof prefix !== 'string' ||
    typeof owner !== 'string' ||
    typeof presence !== 'string' ||
    !Number.isInteger(presenceTtlMs) ||
    !Number.isInteger(stallToleranceMs)
  ) {
    throw new Error(
      'TRIBUTARY_WARDEN must hold redisUrl, prefix, owner, presence, presenceTtlMs and stallToleranceMs',
    );
  }
  return {
    redisUrl,
    prefix,
    owner,
    presence,
    presenceTtlMs: presenceTtlMs!,
    stallToleranceMs: stallToleranceMs!,
    ...(typeof agentHostSocket === 'string' ? { agentHostSocket } : {}),
  };
}
