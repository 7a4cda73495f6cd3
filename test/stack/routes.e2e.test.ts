import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shownText, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, replaceFile, STACK_SECRETS, type Stack, startStack } from './stack-fixture.js';

/** Chats -8101 … are routed by the file below; the environment's policy is allow-once. */
const ROUTES = `
profiles:
  strict:
    permissionPolicy: reject
  members:
    allowedUsers: ["7"]
  asked:
    permissionPolicy: ask
    approvers: [telegram:77]
routes:
  - {name: strict, platform: telegram, channel: "-8101", profile: strict}
  - {name: members, platform: telegram, channel: "-8103", profile: members}
  - {name: asked, platform: telegram, channel: "-8106", profile: asked}
`;

let stack: Stack;
let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-routes-'));
  file = join(dir, 'routes.yaml');
  await writeFile(file, ROUTES);
  stack = await startStack({
    ROUTES_FILE: file,
    ROUTES_RELOAD_MS: '200',
    AGENT_PERMISSION_POLICY: 'allow-once',
    APPROVAL_TIMEOUT_MS: '20000',
  });
});
afterAll(async () => {
  await stack.close();
  await rm(dir, { recursive: true, force: true });
});

let ids = 0;
const PERMISSION = '@tributary_bot go\n@agent {"permission": true}';

function chat(chatId: number) {
  const shown = () =>
    [...stack.calls('telegram', 'sendMessage'), ...stack.calls('telegram', 'editMessageText')]
      .filter((call) => (call.body as { chat_id: number }).chat_id === chatId)
      .map((call) => shownText(call) ?? '');
  return {
    thread: `telegram:${chatId}:main`,
    say: (text: string, from?: { id: number; first_name: string; username: string }) =>
      postTelegramMessage(stack, chatId, 60_000 + ++ids, text, from),
    /** The permission outcome the agent reports in its reply. */
    answered: async () => {
      let outcome: string | undefined;
      await waitFor(
        () => {
          outcome = shown()
            .map((text) => /permission: selected ([a-z-]+)/.exec(text)?.[1])
            .find((found) => found !== undefined);
          return outcome !== undefined;
        },
        { what: () => `the agent's reply in chat ${chatId}; it shows ${JSON.stringify(shown())}` },
      );
      return outcome;
    },
  };
}

describe('routes', () => {
  it("answers each thread's permission requests by its route's policy, the environment's elsewhere", async () => {
    const strict = chat(-8101);
    const elsewhere = chat(-8102);
    expect((await strict.say(PERMISSION)).body).toMatchObject({ outcome: 'accepted' });
    expect((await elsewhere.say(PERMISSION)).body).toMatchObject({ outcome: 'accepted' });
    expect(await strict.answered()).toBe('reject-once');
    expect(await elsewhere.answered()).toBe('allow-once');
    // /status names a thread's route.
    const status = await strict.say('/status');
    expect((status.body as { confirmation: string }).confirmation).toContain('**Route:** strict');
  });

  it('refuses senders the route does not allow, and takes those it does', async () => {
    const members = chat(-8103);
    const refused = await members.say('@tributary_bot hello');
    expect(refused.body).toMatchObject({ outcome: 'ignored', reason: 'user-not-allowed-on-route' });
    const taken = await members.say('@tributary_bot hello', {
      id: 7,
      first_name: 'Grace',
      username: 'grace',
    });
    expect(taken.body).toMatchObject({ outcome: 'accepted' });
  });

  it("lets the route's approvers answer its permission requests", async () => {
    const asked = chat(-8106);
    await asked.say(PERMISSION);
    let data: string | undefined;
    let messageId: number | undefined;
    await waitFor(
      () => {
        const request = stack
          .calls('telegram', 'sendMessage')
          .find(
            (call) =>
              (call.body as { chat_id: number }).chat_id === -8106 &&
              (call.body as { reply_markup?: unknown }).reply_markup !== undefined,
          );
        if (request === undefined) return false;
        data = (request.body as { reply_markup: { inline_keyboard: { callback_data: string }[][] } })
          .reply_markup.inline_keyboard[0]![0]!.callback_data;
        messageId = (request.answer as { result: { message_id: number } }).result.message_id;
        return true;
      },
      { what: 'the permission request' },
    );
    const click = JSON.stringify({
      update_id: 990_000 + ++ids,
      callback_query: {
        id: `cb-route-${ids}`,
        from: { id: 77, is_bot: false, first_name: 'Lin', username: 'lin' },
        message: {
          message_id: messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: -8106, type: 'group' },
        },
        chat_instance: '-1',
        data,
      },
    });
    const answer = await stack.post('/webhooks/telegram', click, {
      'x-telegram-bot-api-secret-token': STACK_SECRETS.TELEGRAM_SECRET_TOKEN,
    });
    expect(answer.body).not.toHaveProperty('text');
    expect(await asked.answered()).toBe('allow-once');
  });

  it('takes a changed file without a restart: new threads take it, a running thread keeps its route', async () => {
    const early = chat(-8104);
    await early.say('@tributary_bot hello');
    await waitFor(async () => (await stack.redis.get(`${stack.prefix}:route:{${early.thread}}`)) !== null, {
      what: 'the first thread’s route record',
    });
    await replaceFile(
      file,
      `${ROUTES}  - {name: late, platform: telegram, channel: "-810?", profile: strict}\n`,
    );
    await waitFor(
      async () =>
        /tributary_route_table_reloads_total\{result="applied"\} 1/.test(
          await stack.ingressMetrics.registry.metrics(),
        ),
      { what: 'the reload' },
    );
    // The thread begun before the change keeps the default route; a new one takes the new route.
    await early.say(PERMISSION);
    expect(await early.answered()).toBe('allow-once');
    const later = chat(-8105);
    await later.say(PERMISSION);
    expect(await later.answered()).toBe('reject-once');

    // A change that cannot be used is refused, said at warn, and the table in force stays.
    await replaceFile(file, `${ROUTES}  - {name: broken, platform: telegram}\n`);
    await waitFor(
      async () =>
        /tributary_route_table_reloads_total\{result="refused"\} 1/.test(
          await stack.ingressMetrics.registry.metrics(),
        ),
      { what: 'the refusal' },
    );
    expect(stack.warnings().map((line) => line.msg)).toContain(
      'route file changed but cannot be used; the table in force stays',
    );
    const last = chat(-8107);
    await last.say(PERMISSION);
    expect(await last.answered()).toBe('reject-once');
  });
});
