// The environment contract the deployment files (docker-compose.yml, infra/k8s) are checked against.
// Shared by test/infra/compose.test.ts and test/infra/k8s-manifests.test.ts so both read one list.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** DESIGN §10: every variable a user may set; the deployments must wire each one that applies. */
export const DESIGN_ENV = [
  'REDIS_URL',
  'PORT',
  'METRICS_PORT',
  'AGENT_COMMAND',
  'AGENT_CWD',
  'SLACK_SIGNING_SECRET',
  'SLACK_BOT_TOKEN',
  'SLACK_API_URL',
  'TELEGRAM_SECRET_TOKEN',
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_API_URL',
  'DISCORD_PUBLIC_KEY',
  'DISCORD_BOT_TOKEN',
  'DISCORD_API_URL',
  'DISCORD_FORWARDER_SECRET',
  'GATEWAY_SECRET',
  'GATEWAY_REPLY_URL',
  'MESSAGE_PROCESSING_MODE',
  'MAX_BATCH_MESSAGES',
  'MAX_BATCH_TOKENS',
  'ADMIN_TOKEN',
] as const;

/** The DESIGN §10 variables that are credentials: never committed with a value, kept in a Secret. */
export const SECRET_ENV = [
  'SLACK_SIGNING_SECRET',
  'SLACK_BOT_TOKEN',
  'TELEGRAM_SECRET_TOKEN',
  'TELEGRAM_BOT_TOKEN',
  'DISCORD_PUBLIC_KEY',
  'DISCORD_BOT_TOKEN',
  'DISCORD_FORWARDER_SECRET',
  'GATEWAY_SECRET',
  'ADMIN_TOKEN',
] as const;

/**
 * Variables the deployment files introduce and the processes must read (not yet in DESIGN §10):
 * - SHUTDOWN_GRACE_MS: how long a SIGTERMed worker lets running turns finish before it cancels them
 *   and hands their threads back; the orchestrators' grace periods are derived from it.
 * - HOME: the agent's home directory, moved onto a writable volume under a read-only root filesystem.
 */
export const DEPLOYMENT_ENV = ['SHUTDOWN_GRACE_MS', 'HOME'] as const;

/** Defaults the manifests rely on when they leave a variable at its default. */
export const DEFAULTS = {
  PORT: 8080,
  METRICS_PORT: 9464,
  SHUTDOWN_GRACE_MS: 30_000,
  CANCEL_TIMEOUT_MS: 5_000,
  WORKER_CONCURRENCY: 4,
} as const;

function sourceFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Names the configuration code reads today: every quoted UPPER_SNAKE_CASE string passed with an env
 * object to a reader (`readInteger(env, 'NAME', ...)`, `url(env, 'NAME', ...)`) or indexed from one
 * (`env.NAME`, `env['NAME']`) in the sources of packages/config and apps/*. Read from the code so a variable added there is known
 * here without a second list to keep in step.
 */
export function configEnvNames(repoRoot: string): Set<string> {
  const roots = [join(repoRoot, 'packages/config/src')];
  for (const app of readdirSync(join(repoRoot, 'apps'))) roots.push(join(repoRoot, 'apps', app, 'src'));
  const names = new Set<string>();
  const patterns = [
    /\b[A-Za-z]+\(\s*env\s*,\s*'([A-Z][A-Z0-9_]+)'/g,
    /\benv\.([A-Z][A-Z0-9_]+)\b/g,
    /\benv\[\s*'([A-Z][A-Z0-9_]+)'\s*\]/g,
  ];
  for (const file of roots.flatMap(sourceFiles)) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.add(match[1]!);
  }
  return names;
}

/** Every name a deployment file may set for a Tributary process. */
export function knownEnvNames(repoRoot: string): Set<string> {
  return new Set([...DESIGN_ENV, ...DEPLOYMENT_ENV, ...configEnvNames(repoRoot)]);
}
