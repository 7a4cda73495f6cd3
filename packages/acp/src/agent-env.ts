/**
 * Variables an agent gets from the parent environment unless told otherwise: enough to find binaries,
 * a home, a locale and a temp dir. Credentials are never inherited implicitly.
 */
export const DEFAULT_INHERITED_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
];

export interface AgentEnvOptions {
  /** Names copied from the parent environment when set there; defaults to DEFAULT_INHERITED_ENV. */
  inheritEnv?: readonly string[];
  /** Variables set explicitly; they win over inherited ones. */
  env?: Readonly<Record<string, string>>;
}

/** Builds the agent's environment from an empty one: the allowlist plus explicit variables only. */
export function buildAgentEnv(
  options: AgentEnvOptions,
  parent: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of options.inheritEnv ?? DEFAULT_INHERITED_ENV) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...options.env };
}
