import { PlatformApiError } from '../outbound.js';
import type { PlatformAnswer } from './answer.js';

/** The id a successful answer must carry; without one the API is not the one we expect. */
export function requireId(platform: string, method: string, answer: PlatformAnswer, id: unknown): string {
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number') return String(id);
  throw new PlatformApiError(
    platform,
    method,
    answer.status,
    'the answer carried no message id; check that the API base URL points at the platform',
  );
}
