import { Store } from '@tributary/queue';
import { type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThreadProfiles } from '../src/turns/thread-profiles.js';

let server: RedisHandle;
let store: Store;
const warnings: string[] = [];
let profiles: ThreadProfiles;
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('profiles') },
  });
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
  profiles = new ThreadProfiles(store.routes, { policy: 'allow', byKind: { read: 'allow-once' } }, logger);
});
afterAll(async () => {
  await store.close();
  await server.stop();
});

describe("a thread's permission rules, from its route", () => {
  it('are the environment’s for a thread without a record, the route’s for one with', async () => {
    expect((await profiles.load('gateway:C1:before-routes')).route).toBe('default');
    expect(profiles.permissions('gateway:C1:before-routes')).toEqual({
      policy: 'allow',
      byKind: { read: 'allow-once' },
    });
    const route = { route: 'strict', profile: { permissionPolicy: 'ask' } };
    await store.routes.note('gateway:C1:strict', JSON.stringify(route));
    await profiles.load('gateway:C1:strict');
    // A profile with a policy replaces the environment's rules too: none of them widens it.
    expect(profiles.permissions('gateway:C1:strict')).toEqual({ policy: 'ask' });
    profiles.release('gateway:C1:strict');
    expect(profiles.permissions('gateway:C1:strict')).toEqual({
      policy: 'allow',
      byKind: { read: 'allow-once' },
    });
  });

  it('fail closed when the record cannot be read: every request is refused, said at warn', async () => {
    // A record of a newer version, with a setting this one does not know.
    await store.routes.note(
      'gateway:C1:newer',
      JSON.stringify({ route: 'x', profile: { agentImage: 'agents/gpu:1' } }),
    );
    expect((await profiles.load('gateway:C1:newer')).route).toBe('unread');
    expect(profiles.permissions('gateway:C1:newer')).toEqual({ policy: 'reject', byKind: {} });
    expect(warnings).toContain("thread's route not read; this turn's permission requests are refused");
  });
});
