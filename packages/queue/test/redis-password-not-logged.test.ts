import { randomBytes } from 'node:crypto';
import { createLogger } from '@tributary/observability';
import { type RedisHandle, startRedis, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConnectionProfile, openConnection } from '../src/connections.js';
import { Store } from '../src/store.js';

// ioredis puts the arguments of a refused AUTH (the password) on the error it reports; these tests read
// every line the shared logger writes, through its own destination, for the password's value.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function capturedLogger() {
  const lines: string[] = [];
  // A destination of its own makes pino write each line at once, so a test reads it as soon as it is logged.
  const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
  return { logger, lines, text: () => lines.join('') };
}

async function privateRedis(): Promise<{ server: RedisHandle; password: string }> {
  const server = await startRedis({ private: true });
  cleanups.push(() => server.stop());
  return { server, password: decodeURIComponent(new URL(server.url).password) };
}

function withPassword(url: string, password: string): string {
  const changed = new URL(url);
  changed.password = password;
  return changed.toString();
}

function openStore(url: string, connection: ConnectionProfile): Store {
  const store = Store.open({ url, connection });
  // Not close(): BullMQ's close of a queue whose connection was never ready leaves a promise rejected
  // that nobody awaits.
  cleanups.push(() => store.disconnect());
  return store;
}

const PROFILES: [string, ConnectionProfile][] = [
  ['ingress', { kind: 'fail-fast', timeoutMs: 500 }],
  ['worker', { kind: 'patient' }],
];

describe('a Redis that answers WRONGPASS', () => {
  it.each(PROFILES)('logs the refusal, never the password sent (%s connection)', async (_, profile) => {
    const { server, password } = await privateRedis();
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const { logger, lines, text } = capturedLogger();
    openStore(withPassword(server.url, wrong), profile).logConnectionErrors(logger);

    await waitFor(() => text().includes('WRONGPASS'), { what: 'the WRONGPASS refusal in the log' });
    const refusal = JSON.parse(lines.find((line) => line.includes('WRONGPASS'))!);
    expect(refusal.err.command).toMatchObject({ name: 'auth' });
    expect(text()).not.toContain(wrong);
    expect(text()).not.toContain(password);
  });

  it('keeps the password out of an AUTH error logged under any name', async () => {
    const { server } = await privateRedis();
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const redis = openConnection(server.url, { kind: 'patient' });
    cleanups.push(() => redis.disconnect());
    const refused = await redis.call('AUTH', wrong).catch((error: Error) => error);
    expect(refused).toMatchObject({ command: { args: [wrong] } });

    const { logger, text } = capturedLogger();
    logger.warn({ error: refused }, 'under another name');
    logger.warn({ failure: { cause: 'auth' }, err: refused }, 'beside other fields');
    logger.error(refused as Error);
    expect(text()).toContain('WRONGPASS');
    expect(text()).not.toContain(wrong);
  });
});

describe('a password rotated while the client runs', () => {
  it('logs neither the old password, which reconnects are refused with, nor the new one', async () => {
    const { server, password: old } = await privateRedis();
    const rotated = `rotated-${randomBytes(12).toString('hex')}`;
    const { logger, text } = capturedLogger();
    const store = openStore(server.url, { kind: 'patient' });
    store.logConnectionErrors(logger);
    await store.ready();

    const admin = new Redis(server.url);
    cleanups.push(() => admin.disconnect());
    await admin.config('SET', 'requirepass', rotated);
    // The admin connection stays; the store's are dropped and reconnect with the old password.
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor(() => text().includes('WRONGPASS'), { what: 'the refused reconnect in the log' });

    await admin.config('SET', 'requirepass', old);
    await waitFor(() => text().includes('recovered'), { what: 'the store back on its password' });
    expect(text()).not.toContain(old);
    expect(text()).not.toContain(rotated);
  });
});
