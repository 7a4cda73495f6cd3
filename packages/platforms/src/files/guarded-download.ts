import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { FileFetchError } from './file-fetch-error.js';
import { isPrivateAddress, isPrivateHost } from './private-address.js';

/** A downloaded file: its bytes and the type the host declared (sniffing is the caller's). */
export interface FetchedFile {
  bytes: Buffer;
  contentType?: string;
}

export interface DownloadLimits {
  /** Larger files are refused, before or while downloading. */
  maxBytes: number;
  timeoutMs: number;
  /** The caller giving up (the turn was cancelled or lost its lease) ends the download too. */
  signal?: AbortSignal;
}

export interface DownloadRequest extends DownloadLimits {
  url: URL;
  /** The file hosts this download may touch, redirects included: origins like `https://files.slack.com`. */
  allowedOrigins: readonly string[];
  /**
   * The operator set these origins (an in-cluster gateway, a self-hosted API server) rather than the
   * client taking the platform's public defaults: their names may resolve to private addresses.
   */
  configuredOrigins?: boolean;
  /** Sent to the first origin only; a redirect to another allowed origin goes without them. */
  headers?: Record<string, string>;
}

const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GET one file from a platform's own file host. A URL, or a redirect, to any other origin is refused
 * (no request is made), and so is a host that resolves to a private or loopback address, unless the
 * operator configured the origins (`configuredOrigins`) or the allowed origin is itself written as
 * such an address (an IP literal or `localhost`, as a test's fake API is; docs/adr/0020). The address
 * is checked where the connection is made, so a DNS answer cannot change between check and use.
 */
export async function guardedDownload(request: DownloadRequest): Promise<FetchedFile> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
  let url = request.url;
  for (let hop = 0; ; hop++) {
    const origin = allowedOrigin(url, request.allowedOrigins);
    // Credentials are for the first origin: another allowed one (a CDN's second host) goes without.
    const headers = url.origin === request.url.origin ? request.headers : undefined;
    const privateAllowed = request.configuredOrigins === true || isPrivateHost(new URL(origin).hostname);
    const response = await get(url, headers, privateAllowed, signal);
    const location = response.headers.location;
    if (REDIRECTS.has(response.statusCode ?? 0) && location !== undefined) {
      response.resume();
      if (hop === MAX_REDIRECTS) throw new FileFetchError('failed', `${url.host} redirected too often`);
      url = new URL(location, url);
      continue;
    }
    if (response.statusCode !== 200) {
      response.resume();
      throw new FileFetchError('failed', `${url.host} answered HTTP ${response.statusCode}`);
    }
    return { bytes: await readCapped(response, request.maxBytes, signal), ...contentTypeOf(response) };
  }
}

/**
 * Whether the operator chose a file host other than the platform's public ones (`defaults`): such an
 * origin may resolve inwards (`configuredOrigins`).
 */
export function operatorChosen(configured: string | undefined, defaults: readonly string[]): boolean {
  if (configured === undefined) return false;
  const origin = new URL(configured).origin;
  return !defaults.some((candidate) => new URL(candidate).origin === origin);
}

function allowedOrigin(url: URL, allowed: readonly string[]): string {
  const origin = allowed.find((candidate) => new URL(candidate).origin === url.origin);
  if (origin === undefined) {
    // A URL without a host (file:, data:) is named by its scheme, so the note never reads " is not…".
    const where = url.host === '' ? `a ${url.protocol} URL` : url.host;
    throw new FileFetchError('refused', `${where} is not this platform's file host`);
  }
  return origin;
}

function get(
  url: URL,
  headers: Record<string, string> | undefined,
  privateAllowed: boolean,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const https = url.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: 'GET',
      headers,
      signal,
      ...(privateAllowed ? {} : { agent: https ? publicOnly.https : publicOnly.http }),
    });
    request.on('response', resolve);
    request.on('error', (error) => reject(asFetchError(error, url)));
    request.end();
  });
}

/** `dns.lookup` that fails for private addresses, so the connection can only go to a public one. */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...(options as LookupOptions), all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as LookupAddress[];
    const blocked = list.find((entry) => isPrivateAddress(entry.address));
    if (blocked !== undefined || list.length === 0) {
      const refusal = new FileFetchError('refused', `${hostname} resolves to a private address`);
      return callback(refusal as NodeJS.ErrnoException, '', 0);
    }
    if ((options as LookupOptions).all)
      return (callback as (e: null, a: LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

/**
 * Kept-alive connections whose address was checked when they were made. Their own pools: a socket
 * opened for an origin allowed to resolve inwards must not serve a download that is not.
 */
const publicOnly = {
  http: new HttpAgent({ keepAlive: true, lookup: publicOnlyLookup }),
  https: new HttpsAgent({ keepAlive: true, lookup: publicOnlyLookup }),
};

async function readCapped(response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw fileTooLarge(maxBytes);
  }
  // With the length declared, the chunks are copied into the file's buffer as they come: one copy of
  // a large file in memory, not its chunks and their concatenation.
  const sized = Number.isInteger(declared) && declared >= 0 ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if (size + chunk.length > maxBytes) {
        response.destroy();
        throw fileTooLarge(maxBytes);
      }
      if (sized && size + chunk.length > sized.length) {
        response.destroy();
        throw new FileFetchError('failed', 'the host sent more than the length it declared');
      }
      if (sized) chunk.copy(sized, size);
      else chunks.push(chunk);
      size += chunk.length;
    }
  } catch (error) {
    if (error instanceof FileFetchError) throw error;
    throw signal.aborted
      ? new FileFetchError('failed', 'the download timed out')
      : new FileFetchError('failed', `the download broke off: ${(error as Error).message}`);
  }
  return sized ? sized.subarray(0, size) : Buffer.concat(chunks);
}

/** The refusal of a file over the limit, for hosts that tell the size before the download, too. */
export function fileTooLarge(maxBytes: number): FileFetchError {
  return new FileFetchError('too_large', `the file is larger than the ${formatBytes(maxBytes)} limit`);
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

function contentTypeOf(response: IncomingMessage): { contentType?: string } {
  const type = response.headers['content-type'];
  return type === undefined ? {} : { contentType: type };
}

function asFetchError(error: Error, url: URL): FileFetchError {
  if (error instanceof FileFetchError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof FileFetchError) return cause;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') {
    return new FileFetchError('failed', `${url.host} did not answer in time`);
  }
  return new FileFetchError(
    'failed',
    `${url.host} could not be reached (${(error as NodeJS.ErrnoException).code ?? error.message})`,
  );
}
