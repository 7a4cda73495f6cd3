import { Store } from '@tributary/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngressHarness, startIngressHarness, telegramHeaders } from './ingress-fixture.js';

let h: IngressHarness;
let store: Store;
beforeAll(async () => {
  h = await startIngressHarness();
  store = Store.open({ url: h.server.url, connection: { kind: 'patient' }, queue: { prefix: h.prefix } });
});
afterAll(async () => {
  await store.close();
  await h.close();
});

const CHAT = -4_400_001;
const THREAD = `telegram:${CHAT}:main`;
let updates = 0;

/** A click on `data` by Ada (42), as Telegram delivers it. */
function click(data: string) {
  updates += 1;
  const body = JSON.stringify({
    update_id: 800_000 + updates,
    callback_query: {
      id: `cb-${updates}`,
      from: { id: 42, is_bot: false, first_name: 'Ada' },
      message: { message_id: 5, date: Math.floor(Date.now() / 1000), chat: { id: CHAT, type: 'supergroup' } },
      chat_instance: '1',
      data,
    },
  });
  return h.post('/webhooks/telegram', body, telegramHeaders());
}

describe('clicks that come too late', () => {
  it('a request whose turn no longer runs is ended, not applied, and the clicker is told', async () => {
    await store.approvals.noteStarter(THREAD, '42');
    const id = await store.approvals.open({
      thread: THREAD,
      batchId: '0000000000000001',
      fence: 7,
      toolCallId: 'call-1',
      toolKind: 'execute',
      title: 'rm -rf build',
      options: [{ optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' }],
    });
    const answer = await click(`ap:${id}:0`);
    expect(answer.body).toMatchObject({
      method: 'answerCallbackQuery',
      text: 'This request ended with its turn; nothing was applied.',
      show_alert: true,
    });
    expect(await store.approvals.get(id)).toMatchObject({ state: 'ended' });
    expect(await h.metrics()).toMatch(
      /tributary_approval_clicks_total\{platform="telegram",result="late"\} 1/,
    );
  });

  it('a request that is gone, or an option it never had, is told so', async () => {
    expect((await click('ap:nosuchrequest:0')).body).toMatchObject({
      text: 'This request has ended; nothing was applied.',
    });
    expect(await h.queuedCount()).toBe(0);
  });
});
