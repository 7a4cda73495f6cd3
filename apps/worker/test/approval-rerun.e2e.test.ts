import { Store } from '@tributary/queue';
import { type FakePlatformApi, startFakePlatformApi, waitFor } from '@tributary/testkit';
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

const THREAD = 'gateway:C1:T1';

/** The data of each permission request the workers put to the gateway, in order. */
function asked(platformApi: FakePlatformApi): string[][] {
  return platformApi
    .calls()
    .filter((call) => call.method === 'ask_approval')
    .map((call) =>
      (call.body as { approval: { options: { data: string }[] } }).approval.options.map((o) => o.data),
    );
}

describe('a permission request whose worker dies while it waits', { timeout: 90_000 }, () => {
  it('is asked again by the re-run, and the one answer applies once', async () => {
    api = await startFakePlatformApi();
    const f = await startFleet({
      AGENT_PERMISSION_POLICY: 'ask',
      APPROVAL_TIMEOUT_MS: '60000',
      GATEWAY_REPLY_URL: api.urls.gatewayReply,
    });
    fleet = f;
    await Promise.all([f.spawn(), f.spawn()]);
    await f.send(THREAD, message('deploy\n@agent {"permission": true}'));
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
    await waitFor(async () => (await f.queue.admin.state(THREAD)).status === 'idle', { what: 'the commit' });
    const replies = f.replies(THREAD).map(({ message: reply }) => reply.text);
    expect(replies).toHaveLength(1);
    expect(replies[0]).toContain('permission: selected allow-once');
    expect((await f.queue.admin.history(THREAD)).map((record) => record.status)).toEqual(['complete']);
  });
});
