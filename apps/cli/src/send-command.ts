import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline/promises';
import { DEFAULT_INGRESS_PORT } from '@tributary/config';
import {
  GATEWAY_EVENT_SCHEMA,
  type GatewayEvent,
  signedRequestHeaders,
  UNICODE_REACTIONS,
} from '@tributary/platforms/gateway-sender';
import { type Command, parseCommandArgs, positiveInteger, UsageError } from './command-line.js';
import { readDevStack } from './dev-stack-file.js';

/** The reactions that end a turn on its last message (done, failed), as the gateway client spells them. */
const FINAL_REACTIONS = new Set([UNICODE_REACTIONS.done, UNICODE_REACTIONS.failed]);
/** How long after the last reply its closing reaction is waited for (reactions may be off). */
const FINAL_REACTION_WAIT_MS = 2_000;

/** The upstream platform the terminal poses as; replies name it back. */
const PLATFORM = 'cli';

/** An `openab.gateway.reply.v1` as the fake gateway recorded it. */
interface GatewayReplyCall {
  seq: number;
  platform: string;
  body: {
    reply_to?: string;
    platform?: string;
    channel?: { thread_id?: string | null };
    content?: { text?: string };
    /**
     * Set on reactions (the emoji is `content.text`, `reply_to` the message it goes on) and on
     * permission requests (`ask_approval` with `approval.options`, `settle_approval`).
     */
    command?: 'add_reaction' | 'remove_reaction' | 'ask_approval' | 'settle_approval';
    request_id?: string;
    approval?: { options: { data: string; name: string; kind: string }[] };
  };
}

/** `tributary send`: a chat user in a terminal. */
export const sendCommand: Command = { run: send };

async function send(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      thread: { type: 'string', default: 'main' },
      from: { type: 'string', default: process.env.USER || 'you' },
      url: { type: 'string' },
      'timeout-ms': { type: 'string', default: '60000' },
      answer: { type: 'string' },
    },
    true,
  );
  if (positionals.length === 0) throw new UsageError('nothing to send');
  const timeoutMs = positiveInteger('timeout-ms', values['timeout-ms']);
  const stack = await readDevStack();
  const url =
    values.url ?? stack?.ingressUrl ?? `http://127.0.0.1:${process.env.PORT ?? DEFAULT_INGRESS_PORT}`;
  const secret = process.env.GATEWAY_SECRET ?? stack?.gatewaySecret;
  if (!secret) {
    throw new Error(
      'no local stack found here or in any folder above: start one with `npm run dev` (or `npx tributary dev`) ' +
        'in the project, or set GATEWAY_SECRET and --url to post to another ingress',
    );
  }
  const repliesUrl = stack?.repliesUrl;
  const unreachable = (what: string) =>
    stack
      ? `the dev stack started in ${stack.root} does not answer at ${what}: it was stopped or crashed; start it again with \`npm run dev\``
      : `nothing answers at ${what}: is ingress running there?`;
  let since = repliesUrl ? await reach(repliesUrl, () => lastSeq(repliesUrl), unreachable) : 0;

  const sent: string[] = [];
  /** What each message said, by its message id, so a reaction can name the message it is on. */
  const texts = new Map<string, string>();
  const sender = { id: `dev-${values.from}`, name: values.from, display_name: values.from, is_bot: false };
  const channel = { id: 'dev', type: 'thread', thread_id: values.thread };
  /** Posts one signed gateway event and returns ingress's answer. */
  const post = async (event: object) => {
    const body = JSON.stringify(event);
    const response = await reach(
      url,
      () =>
        fetch(`${url}/webhooks/gateway`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signedRequestHeaders(secret, body) },
          body,
        }),
      unreachable,
    );
    const answer = (await response.json()) as { outcome?: string; error?: string; answer?: string };
    if (!response.ok)
      throw new Error(`ingress answered ${response.status}: ${answer.error ?? 'no reason given'}`);
    return answer;
  };
  /** Answers a permission request: with --answer, or asked at the terminal; else the fallback will. */
  const approve = async (request: GatewayReplyCall['body']) => {
    const options = request.approval?.options ?? [];
    for (const [index, option] of options.entries())
      process.stdout.write(`   ${index + 1}. ${option.name}\n`);
    const chosen = await chooseOption(options, values.answer);
    if (chosen === undefined) {
      process.stdout.write(
        '   (not answered here: pass --answer <option>; the fallback answers after APPROVAL_TIMEOUT_MS)\n',
      );
      return;
    }
    const answer = await post({
      schema: GATEWAY_EVENT_SCHEMA,
      event_id: randomUUID(),
      timestamp: new Date().toISOString(),
      platform: PLATFORM,
      event_type: 'approval',
      channel,
      sender,
      approval: { data: chosen.data },
      message_id: request.request_id,
    });
    process.stdout.write(`→ ${values.from}: ${chosen.name}${answer.answer ? `   [${answer.answer}]` : ''}\n`);
  };
  for (const text of positionals) {
    const event: GatewayEvent = {
      schema: GATEWAY_EVENT_SCHEMA,
      event_id: randomUUID(),
      timestamp: new Date().toISOString(),
      platform: PLATFORM,
      event_type: 'message',
      channel,
      sender,
      content: { type: 'text', text },
      mentions: [],
      message_id: randomUUID(),
    };
    const answer = await post(event);
    process.stdout.write(`→ ${values.from}: ${text}   [${answer.outcome}]\n`);
    sent.push(event.event_id);
    texts.set(event.message_id, text);
  }
  if (!repliesUrl) {
    process.stdout.write('(replies go to GATEWAY_REPLY_URL; not waiting for them)\n');
    return;
  }

  let deadline = Date.now() + timeoutMs;
  const last = sent.at(-1);
  let answered = false;
  while (Date.now() < deadline) {
    const { seq, calls } = await reach(
      repliesUrl,
      () => poll(repliesUrl, since, Math.min(10_000, deadline - Date.now())),
      unreachable,
    );
    since = seq;
    for (const call of calls) {
      const { body } = call;
      if (
        call.platform !== 'gateway' ||
        body.platform !== PLATFORM ||
        body.channel?.thread_id !== values.thread
      ) {
        continue;
      }
      if (body.command === 'ask_approval') {
        process.stdout.write(`← agent asks:\n${body.content?.text ?? ''}\n`);
        await approve(body);
        continue;
      }
      if (body.command === 'settle_approval') {
        process.stdout.write(`← ${body.content?.text ?? ''}\n`);
        continue;
      }
      if (body.command) {
        const emoji = body.content?.text ?? '';
        process.stdout.write(`${reactionLine(body.command, emoji, texts.get(body.reply_to ?? ''))}\n`);
        // The turn's last word on the message: nothing more is coming for it.
        if (answered && body.reply_to === last && FINAL_REACTIONS.has(emoji)) return;
        continue;
      }
      process.stdout.write(`← agent:\n${body.content?.text ?? ''}\n`);
      // A reply names the delivery (event_id) of the last message of the batch it answers. Its ✅ is
      // posted beside it and may come second: it is waited for a moment, so the output ends as the
      // chat does.
      if (body.reply_to === last && !answered) {
        answered = true;
        deadline = Math.min(deadline, Date.now() + FINAL_REACTION_WAIT_MS);
      }
    }
  }
  if (answered) return;
  throw new Error(
    `no reply to the last message within ${values['timeout-ms']} ms; is \`tributary dev\` running?`,
  );
}

/**
 * The option named by `answer` (its name or its number), or asked for at the terminal when it is one;
 * undefined when neither can say.
 */
async function chooseOption(
  options: readonly { data: string; name: string }[],
  answer: string | undefined,
): Promise<{ data: string; name: string } | undefined> {
  const pick = (said: string) =>
    options.find((option, index) => option.name === said.trim() || String(index + 1) === said.trim());
  if (answer !== undefined) {
    const option = pick(answer);
    if (option === undefined) {
      throw new UsageError(
        `--answer ${answer} is none of the options: ${options.map((o) => o.name).join(', ')}`,
      );
    }
    return option;
  }
  if (!process.stdin.isTTY) return undefined;
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      const option = pick(await terminal.question(`   answer (1-${options.length}): `));
      if (option !== undefined) return option;
    }
  } finally {
    terminal.close();
  }
}

/** A reaction as a chat shows it: the emoji beside the message, not as a reply. */
export function reactionLine(
  command: 'add_reaction' | 'remove_reaction',
  emoji: string,
  on: string | undefined,
): string {
  const message =
    on === undefined ? 'an earlier message' : JSON.stringify(on.length > 40 ? `${on.slice(0, 40)}…` : on);
  return command === 'add_reaction' ? `  ${emoji} on ${message}` : `  ${emoji} taken off ${message}`;
}

/** Runs a request, turning "fetch failed" (nothing listens there) into what the user should do. */
async function reach<T>(
  url: string,
  request: () => Promise<T>,
  unreachable: (url: string) => string,
): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof TypeError && error.message === 'fetch failed') throw new Error(unreachable(url));
    throw error;
  }
}

async function poll(repliesUrl: string, since: number, waitMs: number) {
  const response = await fetch(`${repliesUrl}/_calls?since=${since}&waitMs=${Math.max(0, waitMs)}`);
  return (await response.json()) as { seq: number; calls: GatewayReplyCall[] };
}

async function lastSeq(repliesUrl: string): Promise<number> {
  return (await poll(repliesUrl, Number.MAX_SAFE_INTEGER, 0)).seq;
}
