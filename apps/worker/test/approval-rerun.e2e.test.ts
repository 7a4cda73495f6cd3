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

/** A platform the request is put to: where its thread is, and the data of each request's buttons. */
interface Place {
  thread: string;
  event: Partial<ArrivalEvent>;
  env: (platformApi: FakePlatformApi) => Record<string, string>;
  /** Each request's button data (`ap:<request>:<option>`), in the order the workers posted them. */
  asked: (calls: FakeApiCall[]) => string[][];
}

const PLACES: Record<string, Place> = {
  gateway: {
    thread: 'gateway:C1:T1',
    event: {},
    env: (platformApi) => ({ GATEWAY_REPLY_URL: platformApi.urls.gatewayReply }),
    asked: (calls) =>
      calls
        .filter((call) => call.method === 'ask_approval')
        .map((call) =>
          (call.body as { approval: { options: { data: string }[] } }).approval.options.map((o) => o.data),
        ),
  },
  telegram: {
    thread: 'telegram:-100777:main',
    event: { platform: 'telegram', channelId: '-100777', threadId: undefined },
    env: (platformApi) => ({
      TELEGRAM_BOT_TOKEN: platformApi.tokens.telegram,
      TELEGRAM_API_URL: platformApi.urls.telegram,
    }),
    asked: (calls) =>
      calls
        .filter((call) => call.method === 'sendMessage')
        .map((call) => call.body as { reply_markup?: { inline_keyboard: { callback_data: string }[][] } })
        .filter((body) => body.reply_markup !== undefined)
        .map((body) => body.reply_markup!.inline_keyboard.flat().map((button) => button.callback_data)),
  },
  slack: {
    thread: 'slack:C1:1700000000.000100',
    event: { platform: 'slack', channelId: 'C1', threadId: '1700000000.000100' },
    env: (platformApi) => ({
      SLACK_BOT_TOKEN: platformApi.tokens.slack,
      SLACK_API_URL: platformApi.urls.slack,
    }),
    asked: (calls) =>
      calls
        .filter((call) => call.method === 'chat.postMessage')
        .map((call) => (call.body as { blocks?: { type: string; elements?: { value: string }[] }[] }).blocks)
        .filter((blocks) => blocks !== undefined)
        .map((blocks) => blocks!.find((block) => block.type === 'actions')!.elements!.map((b) => b.value)),
  },
  discord: {
    thread: 'discord:600001:890001',
    event: { platform: 'discord', channelId: '890001', threadId: undefined },
    env: (platformApi) => ({
      DISCORD_BOT_TOKEN: platformApi.tokens.discord,
      DISCORD_API_URL: platformApi.urls.discord,
    }),
    asked: (calls) =>
      calls
        .filter((call) => call.method === 'createMessage')
        .map((call) => (call.body as { components?: { components: { custom_id: string }[] }[] }).components)
        .filter((rows) => rows !== undefined && rows.length > 0)
        .map((rows) => rows!.flatMap((row) => row.components.map((button) => button.custom_id))),
  },
};

describe.each(Object.keys(PLACES))(
  'a permission request whose worker dies while it waits (%s)',
  (platform) => {
    const { thread: THREAD, event, env, asked: askedIn } = PLACES[platform]!;
    const asked = (platformApi: FakePlatformApi) => askedIn(platformApi.calls());

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
