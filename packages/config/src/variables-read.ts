import type { Env } from './env-readers.js';

/**
 * The names a configuration loader reads, found by running it on an environment that records every
 * lookup: the one source for contract checks (README tables, deployment files), so no list of names is
 * kept by hand. `given` supplies values for variables the loader requires.
 */
export function variablesRead(load: (env: Env) => unknown, given: Record<string, string> = {}): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get: (_, name) => {
      if (typeof name !== 'string') return undefined;
      read.add(name);
      return given[name];
    },
  });
  load(env);
  return read;
}
