import { randomUUID } from 'node:crypto';
import { readDevStack } from './dev-stack-file.js';

/** Exit codes of `tributary admin`, for scripts: 2 (usage) is main's. */
export const EXIT = { ok: 0, failed: 1, notFound: 3, refused: 4 } as const;

/** An answer of the admin API other than 2xx, with the exit code it maps to. */
export class AdminError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export interface AdminTarget {
  url: string;
  token: string;
}

/**
 * Where the admin API is and the token to use: TRIBUTARY_ADMIN_URL and TRIBUTARY_ADMIN_TOKEN, else the
 * local dev stack's (tributary dev writes both to .tributary/dev.json).
 */
export async function adminTarget(env: NodeJS.ProcessEnv): Promise<AdminTarget> {
  const stack = await readDevStack();
  const url = env.TRIBUTARY_ADMIN_URL ?? stack?.adminUrl;
  const token = env.TRIBUTARY_ADMIN_TOKEN ?? stack?.adminToken;
  if (!url || !token) {
    throw new AdminError(
      'set TRIBUTARY_ADMIN_URL (the admin listener, e.g. http://127.0.0.1:8081) and TRIBUTARY_ADMIN_TOKEN, or run it where `tributary dev` runs',
      EXIT.failed,
    );
  }
  return { url: url.replace(/\/$/, ''), token };
}

// biome-ignore lint/suspicious/noExplicitAny: the command prints whatever JSON the API answered.
export type Answer = any;

/** One admin API call; an action carries an idempotency key, so a retry of this call is harmless. */
export async function adminCall(
  target: AdminTarget,
  path: string,
  method = 'GET',
  body?: unknown,
): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(`${target.url}/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(method === 'GET' ? {} : { 'idempotency-key': randomUUID() }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new AdminError(`nothing answers at ${target.url}: is ingress's admin listener there?`, EXIT.failed);
  }
  const answer = (await response.json().catch(() => ({}))) as { error?: string };
  if (response.ok) return answer;
  const reason = answer.error ?? `HTTP ${response.status}`;
  if (response.status === 404) throw new AdminError(reason, EXIT.notFound);
  if (response.status === 401 || response.status === 403) throw new AdminError(reason, EXIT.refused);
  throw new AdminError(`the admin API answered ${response.status}: ${reason}`, EXIT.failed);
}
