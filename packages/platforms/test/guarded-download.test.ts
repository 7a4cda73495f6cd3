import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileFetchError } from '../src/files/file-fetch-error.js';
import { guardedDownload, operatorChosen, publicOnlyLookup } from '../src/files/guarded-download.js';
import { isPrivateAddress } from '../src/files/private-address.js';

const LIMITS = { maxBytes: 1024, timeoutMs: 5_000 };
let server: Server;
let origin: string;
/** The same server under a name the allow-list does not hold. */
let elsewhere: string;
const seen: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push(req);
    const path = req.url ?? '/';
    if (path === '/file') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    if (path === '/auth') return void res.end(req.headers.authorization ?? 'none');
    if (path === '/hop') return void res.writeHead(302, { location: '/file' }).end();
    if (path === '/away') return void res.writeHead(302, { location: `${elsewhere}/file` }).end();
    if (path === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (path === '/big') return void res.end(Buffer.alloc(4096));
    if (path === '/stream') {
      // No Content-Length: the cap must hold while the bytes arrive.
      res.writeHead(200, { 'transfer-encoding': 'chunked' });
      for (let i = 0; i < 8; i++) res.write(Buffer.alloc(512));
      return void res.end();
    }
    res.writeHead(404).end();
  });
  // Every interface: the machine's own host name may resolve to any of its private addresses.
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  elsewhere = `http://localhost:${port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const download = (path: string, extra: { headers?: Record<string, string>; base?: string } = {}) =>
  guardedDownload({
    url: new URL(`${extra.base ?? origin}${path}`),
    allowedOrigins: [origin],
    ...(extra.headers ? { headers: extra.headers } : {}),
    ...LIMITS,
  });

async function failure(promise: Promise<unknown>): Promise<FileFetchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FileFetchError);
  return error as FileFetchError;
}

describe('guardedDownload', () => {
  it('fetches from the allowed origin, with the host-declared type', async () => {
    const file = await download('/file');
    expect(file.bytes.toString()).toBe('hello');
    expect(file.contentType).toBe('text/plain');
    expect((await download('/auth', { headers: { authorization: 'Bearer t' } })).bytes.toString()).toBe(
      'Bearer t',
    );
  });

  it('refuses another origin without asking it', async () => {
    const before = seen.length;
    const error = await failure(download('/file', { base: elsewhere }));
    expect(error.failure).toBe('refused');
    expect(error.message).toBe(`${new URL(elsewhere).host} is not this platform's file host`);
    expect(seen.length).toBe(before);
  });

  it('names a URL without a host by its scheme: a file: URL is refused, never read', async () => {
    const error = await failure(download('/etc/passwd', { base: 'file://' }));
    expect(error.failure).toBe('refused');
    expect(error.message).toBe("a file: URL is not this platform's file host");
  });

  it('follows redirects on the host, refuses one off it, and gives up on a loop', async () => {
    expect((await download('/hop')).bytes.toString()).toBe('hello');
    const before = seen.length;
    expect((await failure(download('/away'))).failure).toBe('refused');
    expect(seen.length).toBe(before + 1);
    expect((await failure(download('/loop'))).message).toContain('redirected too often');
  });

  it('refuses files over the limit, declared or streamed', async () => {
    expect((await failure(download('/big'))).failure).toBe('too_large');
    const streamed = await failure(download('/stream'));
    expect(streamed.failure).toBe('too_large');
    expect(streamed.message).toBe('the file is larger than the 1 KiB limit');
  });

  it('reports an error answer by its status, never the URL', async () => {
    const error = await failure(download('/missing?token=secret'));
    expect(error).toMatchObject({ failure: 'failed' });
    expect(error.message).toBe(`${new URL(origin).host} answered HTTP 404`);
  });
});

describe('the connection-time address check', () => {
  it('refuses a name that resolves to a loopback address', async () => {
    const error = await new Promise<Error | null>((resolve) =>
      publicOnlyLookup('localhost', { all: true }, (err) => resolve(err)),
    );
    expect(error).toBeInstanceOf(FileFetchError);
    expect(error!.message).toBe('localhost resolves to a private address');
  });

  it('lets a name resolve inwards when the operator configured the origin, and only then', async () => {
    // The machine's own name resolves to one of its private addresses (/etc/hosts on Linux and in
    // containers), as an in-cluster gateway's service name or a self-hosted Bot API server's does.
    const name = hostname();
    const { address } = await lookup(name);
    expect(isPrivateAddress(address), `${name} resolves to ${address}, which this test needs private`).toBe(
      true,
    );
    const inward = `http://${name}:${(server.address() as AddressInfo).port}`;
    const request = { url: new URL(`${inward}/file`), allowedOrigins: [inward], ...LIMITS };
    expect((await guardedDownload({ ...request, configuredOrigins: true })).bytes.toString()).toBe('hello');
    const refused = await failure(guardedDownload(request));
    expect(refused.failure).toBe('refused');
    expect(refused.message).toBe(`${name} resolves to a private address`);
  });

  it('counts an origin as the operator’s only when it is set and none of the platform’s own', () => {
    const defaults = ['https://files.slack.com'];
    expect(operatorChosen(undefined, defaults)).toBe(false);
    expect(operatorChosen('https://files.slack.com/', defaults)).toBe(false);
    expect(operatorChosen('http://files.internal:8080', defaults)).toBe(true);
    expect(operatorChosen('http://gateway.tributary.svc', [])).toBe(true);
  });

  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['::1', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['8.8.8.8', false],
    ['2606:4700::1111', false],
    ['172.32.0.1', false],
  ])('%s is private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});
