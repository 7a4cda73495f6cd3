import { SlackClient } from '@tributary/platforms';
import { type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SenderNames } from '../src/sender-names.js';

let api: FakePlatformApi;
beforeAll(async () => {
  api = await startFakePlatformApi();
  api.seedSlackUser({ id: 'U7', name: 'grace', realName: 'Grace Hopper' });
});
afterAll(() => api.close());

const bare = (id: string) => ({ id, name: id, displayName: id, isBot: false });
const lookups = () => api.calls().filter((call) => call.method === 'users.info').length;

function names() {
  const slack = new SlackClient({ token: api.tokens.slack, baseUrl: api.urls.slack });
  return new SenderNames(new Map([['slack', slack]]), pino({ level: 'silent' }));
}

describe('SenderNames', () => {
  it('names a sender known by id alone, once per TTL', async () => {
    const cache = names();
    const before = lookups();
    const expected = { id: 'U7', name: 'grace', displayName: 'Grace Hopper', isBot: false };
    expect(await cache.resolve('slack:C1:1.1', bare('U7'))).toEqual(expected);
    expect(await cache.resolve('slack:C2:2.2', bare('U7'))).toEqual(expected);
    expect(lookups()).toBe(before + 1);
  });

  it('asks once for a burst of messages from a sender it does not know yet', async () => {
    const cache = names();
    const before = lookups();
    const all = await Promise.all(Array.from({ length: 5 }, () => cache.resolve('slack:C1:1.1', bare('U7'))));
    expect(new Set(all.map((sender) => sender.name))).toEqual(new Set(['grace']));
    expect(lookups()).toBe(before + 1);
  });

  it('fails open to the id, and does not ask again at once', async () => {
    const cache = names();
    const before = lookups();
    expect(await cache.resolve('slack:C1:1.1', bare('U404'))).toEqual(bare('U404'));
    expect(await cache.resolve('slack:C1:1.1', bare('U404'))).toEqual(bare('U404'));
    expect(lookups()).toBe(before + 1);
  });

  it('keeps a name the event carried, and asks nothing for platforms without lookups', async () => {
    const cache = names();
    const before = lookups();
    const named = { id: 'U7', name: 'g', displayName: 'G', isBot: false };
    expect(await cache.resolve('slack:C1:1.1', named)).toBe(named);
    expect(await cache.resolve('telegram:1:main', bare('42'))).toEqual(bare('42'));
    expect(lookups()).toBe(before);
  });
});
