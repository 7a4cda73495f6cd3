import type { ArrivalEvent } from '@tributary/packing';
import { Store } from '@tributary/queue';
import { type FakeApiCall, type FakePlatformApi, startFakePlatformApi, waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './fleet/fleet.js';
import { message } from './worker-fixture.js';

let fleet: Fleet | undefined;
let api: FakePlatformApi | undefined;
afterEach(async () => {
  await fleet?.close();
  await api?.close();
  fleet = undefined;
  api = undefined;
});

/** A platform the request is put to: where its thread is, and how its requests show their buttons. */
interface Place {
  thread: string;
  event: Partial<ArrivalEvent>;
  env: (platformApi: FakePlatformApi) => Record<string, string>;
  /** The API method a request is posted with. */
  method: string;
  /** A post's button data (`ap:<request>:<option>`); undefined for a post that is no request. */
  buttons: (body: never) => string[] | undefined;
}

const PLACES: Record<string, Place> = {
  gateway: {
    thread: 'gateway:C1:T1',
    event: {},
    env: (platformApi) => ({ GATEWAY_REPLY_URL: platformApi.urls.gatewayReply }),
    method: 'ask_approval',
    buttons: (body: { approval: { options: { data: string }[] } }) =>
      body.approval.options.map((o) => o.data),
  },
  telegram: {
    thread: 'telegram:-100777:main',
    event: { platform: 'telegram', channelId: '-100777', threadId: undefined },
    env: (platformApi) => ({
      TELEGRAM_BOT_TOKEN: platformApi.tokens.telegram,
      TELEGRAM_API_URL: platformApi.urls.telegram,
    }),
    method: 'sendMessage',
    buttons: (body: { reply_markup?: { inline_keyboard: { callback_data: string }[][] } }) =>
      body.reply_markup?.inline_keyboard.flat().map((button) => button.callback_data),
  },
  slack: {
    thread: 'slack:C1:1700000000.000100',
    event: { platform: 'slack', channelId: 'C1', threadId: '1700000000.000100' },
    env: (platformApi) => ({
      SLACK_BOT_TOKEN: platformApi.tokens.slack,
      SLACK_API_URL: platformApi.urls.slack,
    }),
    method: 'chat.postMessage',
    buttons: (body: { blocks?: { type: string; elements?: { value: string }[] }[] }) =>
      body.blocks?.find((block) => block.type === 'actions')?.elements?.map((button) => button.value),
  },
  discord: {
    thread: 'discord:600001:890001',
    event: { platform: 'discord', channelId: '890001', threadId: undefined },
    env: (platformApi) => ({
      DISCORD_BOT_TOKEN: platformApi.tokens.discord,
      DISCORD_API_URL: platformApi.urls.discord,
    }),
    method: 'createMessage',
    buttons: (body: { components?: { components: { custom_id: string }[] }[] }) =>
      body.components?.flatMap((row) => row.components.map((button) => button.custom_id)),
  },
};

/** The button data of each request the workers posted, in order. */
function askedIn(place: Place, calls: FakeApiCall[]): string[][] {
  return calls
    .filter((call) => call.method === place.method)
    .map((call) => place.buttons(call.body as never))
    .filter((buttons): buttons is string[] => buttons !== undefined && buttons.length > 0);
}

describe.each(Object.keys(PLACES))(
  'a permission request whose worker dies while it waits (%s)',
  (platform) => {
    const place = PLACES[platform]!;
    const { thread: THREAD, event, env } = place;
    const asked = (platformApi: FakePlatformApi) => askedIn(place, platformApi.calls());

    it('is asked again by the re-run, and the one answer applies once', { timeout: 90_000 }, async () => {
      api = await startFakePlatformApi();
      const f = await startFleet({
        AGENT_PERMISSION_POLICY: 'ask',
        APPROVAL_TIMEOUT_MS: '60000',
        ...env(api),
      });
      fleet = f;
      await Promise.all([f.spawn(), f.spawn()]);
      await f.send(THREAD, { ...message('deploy\n@agent {"permission": true}'), ...event });
      await waitFor(() => asked(api!).length === 1, { what: 'the first request in the thread' });
      const victim = f.dispatches(THREAD)[0]!.worker;
      await victim.kill();

      // The batch runs again elsewhere, and its agent asks again: a new request, for the new lease.
      await waitFor(() => asked(api!).length === 2, { what: 'the re-run to ask again', timeoutMs: 60_000 });
      const [first, second] = asked(api!);
      const id = (data: string) => data.split(':')[1]!;
      expect(id(second![0]!)).not.toBe(id(first![0]!));

      // Settled as ingress settles a click: the second request, by its allow-once option.
      const store = Store.open({
        url: f.redisUrl,
        connection: { kind: 'patient' },
        queue: { prefix: f.queue.config.prefix },
      });
      try {
        const request = (await store.approvals.get(id(second![0]!)))!;
        expect(request).toMatchObject({ state: 'pending', thread: THREAD });
        expect(request.fence).toBeGreaterThan((await store.approvals.get(id(first![0]!)))!.fence);
        const allowOnce = request.options.find((option) => option.kind === 'allow_once')!;
        expect(await store.approvals.settle(request.id, 'answered', allowOnce.optionId, '42')).toEqual({
          settled: true,
        });
        expect(await store.approvals.settle(request.id, 'answered', allowOnce.optionId, '42')).toMatchObject({
          settled: false,
          state: 'answered',
        });
      } finally {
        await store.close();
      }

      await f.waitForReplies(THREAD, 1);
      await waitFor(async () => (await f.queue.admin.state(THREAD)).status === 'idle', {
        what: 'the commit',
      });
      const replies = f.replies(THREAD).map(({ message: reply }) => reply.text);
      expect(replies).toHaveLength(1);
      expect(replies[0]).toContain('permission: selected allow-once');
      expect((await f.queue.admin.history(THREAD)).map((record) => record.status)).toEqual(['complete']);
    });
  },
);
