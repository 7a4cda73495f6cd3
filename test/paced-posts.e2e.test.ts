import { type MessageRef, SlackClient } from '@tributary/platforms';
import { Store } from '@tributary/queue';
import {
  type FakePlatformApi,
  type RedisHandle,
  shownText,
  startFakePlatformApi,
  startRedis,
  uniquePrefix,
} from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Twenty writes a second per channel, as both the fake Slack and the fleet's budget are told. */
const PER_MINUTE = 1_200;
const THREADS = 10;
const REPLIES = 20;

let api: FakePlatformApi;
let redis: RedisHandle;
const workers: Store[] = [];
beforeAll(async () => {
  api = await startFakePlatformApi({ slackChannelPostsPerMinute: PER_MINUTE });
  redis = await startRedis();
  const prefix = uniquePrefix('paced');
  // Two workers: each its own Redis connection and Slack client, as two processes of the fleet.
  for (let i = 0; i < 2; i++) {
    workers.push(Store.open({ url: redis.url, connection: { kind: 'patient' }, queue: { prefix } }));
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(workers.map((store) => store.close()));
  await redis.stop();
  await api.close();
});

function slackClient(store: Store | undefined) {
  const pace = store?.pace();
  return new SlackClient({
    token: api.tokens.slack,
    baseUrl: api.urls.slack,
    channelPostsPerMinute: PER_MINUTE,
    ...(pace === undefined ? { retry: { maxAttempts: 1 } } : { pace: (p, l, d) => pace.take(p, l, d) }),
  });
}

function threadIn(channel: string, thread: number): MessageRef {
  const ts = `1700400000.${String(thread).padStart(6, '0')}`;
  return { platform: 'slack', channelId: channel, threadId: ts, messageId: ts };
}

function postsIn(channel: string) {
  return api
    .calls()
    .filter(
      (call) => call.method === 'chat.postMessage' && (call.body as { channel: string }).channel === channel,
    );
}

describe('posts paced across the fleet', () => {
  it('the fake Slack refuses a burst into one channel beyond its limit, as Slack does', async () => {
    const unpaced = slackClient(undefined);
    const sent = await Promise.allSettled(
      Array.from({ length: 30 }, (_, n) => unpaced.send(threadIn('CRAW', 0), `burst ${n}`)),
    );
    expect(sent.filter((result) => result.status === 'rejected').length).toBeGreaterThan(0);
    expect(postsIn('CRAW').filter((call) => call.status === 429).length).toBeGreaterThan(0);
  });

  it('200 replies into one channel from two workers arrive in order with no 429', async () => {
    const clients = workers.map(slackClient);
    await Promise.all(
      Array.from({ length: THREADS }, async (_, thread) => {
        // Each thread's replies one after another, as its outbox delivers them; threads side by side.
        const client = clients[thread % 2]!;
        for (let reply = 0; reply < REPLIES; reply++) {
          await client.send(threadIn('CPACED', thread), `thread ${thread} reply ${reply}`);
        }
      }),
    );
    const posts = postsIn('CPACED');
    expect(posts).toHaveLength(THREADS * REPLIES);
    expect(posts.filter((call) => call.status !== 200)).toEqual([]);
    for (let thread = 0; thread < THREADS; thread++) {
      const { threadId } = threadIn('CPACED', thread);
      const texts = posts
        .filter((call) => (call.body as { thread_ts: string }).thread_ts === threadId)
        .map((call) => shownText(call));
      expect(texts).toEqual(Array.from({ length: REPLIES }, (_, reply) => `thread ${thread} reply ${reply}`));
    }
  });
});
