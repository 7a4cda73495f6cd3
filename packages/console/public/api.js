// The admin API, with the token this browser tab was given: kept in sessionStorage (gone when the tab
// closes), sent as an Authorization header; no cookie, so no other site can make the browser act.
const TOKEN = 'tributary.adminToken';

export const token = {
  get: () => sessionStorage.getItem(TOKEN),
  set: (value) => sessionStorage.setItem(TOKEN, value),
  clear: () => sessionStorage.removeItem(TOKEN),
};

/** An answer other than 2xx, with the API's `{ error, code }`. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

/** Calls the admin API; every action carries an idempotency key of its own, so a retry is harmless. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { authorization: `Bearer ${token.get() ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['idempotency-key'] = crypto.randomUUID();
  const response = await fetch(`/admin${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => undefined);
  if (!response.ok) {
    if (response.status === 401) {
      token.clear();
      window.dispatchEvent(new Event('tributary:signed-out'));
    }
    throw new ApiError(response.status, answer);
  }
  return answer;
}

/** Path segment for an id (thread ids hold ':' and more). */
export const seg = (id) => encodeURIComponent(id);
