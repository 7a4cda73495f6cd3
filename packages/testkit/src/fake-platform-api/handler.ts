import type { IncomingHttpHeaders } from 'node:http';
import type { FakeFailure, FakePlatform } from './types.js';

export interface FakeRequest {
  verb: string;
  /** The path below the platform's prefix, e.g. `/chat.postMessage` or `/channels/1/messages`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** JSON body, form fields or GET query, as recorded. */
  payload: Record<string, unknown> | undefined;
}

export interface FakeAnswer {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON; no body when undefined. */
  body?: unknown;
}

/** One platform's side of the fake: its routes, its auth, and the shapes of its errors. */
export interface FakePlatformHandler {
  readonly platform: FakePlatform;
  /** The API method the request names, for the call log and `failNext`. */
  method(request: FakeRequest): string;
  /** The path as recorded: a token in it is replaced. */
  recordedPath(request: FakeRequest): string;
  authorized(request: FakeRequest): boolean;
  /** Whose credentials an authorized request carries, where the platform tells accounts apart. */
  account?(request: FakeRequest): string | undefined;
  unauthorized(): FakeAnswer;
  failure(failure: FakeFailure): FakeAnswer;
  handle(request: FakeRequest, method: string): FakeAnswer;
}
