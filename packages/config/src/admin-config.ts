import { storeDefaults } from '@tributary/queue/config';
import { ConfigError } from './config-error.js';
import {
  checkTokenLength,
  type Env,
  readInteger,
  readOptional,
  readString,
  readToken,
} from './env-readers.js';

/** What an admin token may do: `read` the lists and reports, or also `act` (every POST). */
export type AdminRole = 'read' | 'act';

/** One operator credential: its name is what the audit log records as who acted. */
export interface AdminToken {
  name: string;
  role: AdminRole;
  token: string;
}

/** The admin listener: the admin API, the operator console and `/metrics`, apart from the webhooks. */
export interface AdminSettings {
  /** ADMIN_PORT; 0: any free port. */
  adminPort: number;
  adminHost: string;
  /** Empty: no admin API (the listener still serves `/metrics`). */
  adminTokens: readonly AdminToken[];
  /** Entries the audit log keeps (about: it is trimmed a stream node at a time). */
  auditMaxEntries: number;
}

export const DEFAULT_ADMIN_PORT = 8081;

/** Where the admin listener answers unless told otherwise: this machine only. */
export const LOOPBACK = '127.0.0.1';

const TOKEN_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * ADMIN_TOKENS: comma-separated `name:role:token` (role `read` or `act`), e.g.
 * `alice:act:<token>,grafana:read:<token>`; ADMIN_TOKEN adds one more, named `admin`, that may act.
 */
export function readAdminTokens(env: Env): AdminToken[] {
  const name = 'ADMIN_TOKENS';
  const tokens: AdminToken[] = [];
  for (const entry of (readOptional(env, name) ?? '').split(',')) {
    if (entry.trim() === '') continue;
    const [tokenName = '', role = '', ...rest] = entry.trim().split(':');
    const token = rest.join(':');
    if (!TOKEN_NAME.test(tokenName) || (role !== 'read' && role !== 'act') || token === '') {
      throw new ConfigError(
        name,
        `expected name:role:token with role read or act, got ${JSON.stringify(`${tokenName}:${role}:…`)}`,
      );
    }
    checkTokenLength(name, token);
    tokens.push({ name: tokenName, role, token });
  }
  const single = readToken(env, 'ADMIN_TOKEN');
  if (single !== undefined) tokens.push({ name: 'admin', role: 'act', token: single });
  const names = new Set<string>();
  const secrets = new Set<string>();
  for (const { name: tokenName, token } of tokens) {
    if (names.has(tokenName))
      throw new ConfigError(name, `the name ${tokenName} is given twice (ADMIN_TOKEN is named admin)`);
    if (secrets.has(token)) throw new ConfigError(name, `two names share one token (${tokenName})`);
    names.add(tokenName);
    secrets.add(token);
  }
  return tokens;
}

export function readAdminSettings(env: Env): AdminSettings {
  return {
    adminPort: readInteger(env, 'ADMIN_PORT', DEFAULT_ADMIN_PORT, 0, 65_535),
    adminHost: readString(env, 'ADMIN_HOST', LOOPBACK),
    adminTokens: Object.freeze(readAdminTokens(env)),
    auditMaxEntries: readInteger(
      env,
      'ADMIN_AUDIT_MAX_ENTRIES',
      storeDefaults.auditMaxEntries,
      100,
      1_000_000,
    ),
  };
}
