/**
 * Redis SIGKILLed under load, the whole stack running: a private Redis (AOF `appendfsync always`),
 * `tributary ingress` and two `tributary worker` processes with the built-in agent, and the testkit's
 * fake platform API as the gateway's reply receiver. Producers post signed gateway messages, each
 * retried as a platform retries (same message id) until ingress acknowledges it with 200, while Redis
 * is killed every few seconds and restarted on the same data. The built-in agent's reply quotes every
 * message of its batch, so an acknowledged message is answered when a reply quotes it. Ends with
 * `redis-kill: acknowledged=<n> answered=<n> lost=0 replies=<n> posted_twice=0 kills=<n>`
 * and exits non-zero when `lost` or `posted_twice` is not zero.
 *
 *   npm run chaos:redis-kill [-- --seconds 60 --every 8 --producers 8 --threads 40]
 */
import { parseArgs } from 'node:util';
import { signedRequestHeaders } from '@tributary/platforms';
import {
  type FakeApiCall,
  startFakePlatformApi,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@tributary/testkit';
import { runCli } from '../support/cli-process.js';
import { gatewayEventBody } from '../support/gateway-event.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    every: { type: 'string', default: '8' },
    producers: { type: 'string', default: '8' },
    threads: { type: 'string', default: '40' },
  },
});
const seconds = Number(values.seconds);
const everyMs = Number(values.every) * 1000;
const producers = Number(values.producers);
const threadCount = Number(values.threads);

const log = (line: string) => process.stderr.write(`${line}\n`);
// Sleeps pace the load and the kills; the end is awaited as a condition.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SECRET = 'redis-kill-gateway-secret-0001';

const redis = await startRedis({ private: true, appendfsync: 'always' });
const api = await startFakePlatformApi({ gatewaySecret: SECRET });
const common = {
  REDIS_URL: redis.url,
  REDIS_PREFIX: uniquePrefix('kill'),
  GATEWAY_SECRET: SECRET,
  LOG_LEVEL: 'warn',
  HOME: process.env.HOME ?? '',
};
const ingress = runCli(['ingress'], { env: { ...common, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' } });
const workers = Array.from({ length: 2 }, () =>
  runCli(['worker'], {
    env: { ...common, METRICS_PORT: '0', GATEWAY_REPLY_URL: api.urls.gatewayReply, SHUTDOWN_GRACE_MS: '0' },
  }),
);
await waitFor(() => ingress.stdout().includes('ingress listening'), { what: 'ingress', timeoutMs: 30_000 });
const ingressUrl = /"url":"([^"]+)"/.exec(ingress.stdout())![1]!;
// Workers log at warn: started once their health server answers.
await sleep(3_000);

const acknowledged = new Set<string>();
let refusals = 0;
let producing = true;
let kills = 0;

/** Posts one message as a platform would, again after any refusal, until it is acknowledged. */
async function deliver(thread: number, token: string): Promise<void> {
  // A conversation (channel) per thread: ingress's rate limit is per conversation.
  const body = gatewayEventBody({ id: token, thread: 'main', channel: `c${thread}`, text: token });
  for (;;) {
    const answer = await fetch(`${ingressUrl}/webhooks/gateway`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedRequestHeaders(SECRET, body) },
      body,
    }).then(
      (response) => ({ status: response.status, retryAfter: Number(response.headers.get('retry-after')) }),
      () => ({ status: 0, retryAfter: 0 }),
    );
    if (answer.status === 200) {
      acknowledged.add(token);
      return;
    }
    refusals++;
    // As a platform does: again after the wait ingress asked for, else soon.
    await sleep(answer.retryAfter > 0 ? answer.retryAfter * 1000 : 100);
  }
}

async function produce(producer: number): Promise<void> {
  for (let n = 0; producing; n++) {
    await deliver(Math.floor(Math.random() * threadCount), `rk-${producer}-${n}`);
    await sleep(20 + Math.random() * 60);
  }
}

async function killRedis(): Promise<void> {
  for (;;) {
    await sleep(everyMs * (0.5 + Math.random()));
    if (!producing) return;
    await redis.kill('SIGKILL');
    kills++;
    log(`redis-kill: SIGKILL ${kills} at ${acknowledged.size} acknowledged`);
    await sleep(500 + Math.random() * 1_500);
    await redis.restart();
  }
}

const replies = () => api.calls().filter((call: FakeApiCall) => call.method === 'reply');
const quoted = () => {
  const found = new Set<string>();
  for (const call of replies()) {
    const text = (call.body as { content: { text: string } }).content.text;
    for (const match of text.matchAll(/rk-\d+-\d+/g)) found.add(match[0]);
  }
  return found;
};

const running = [...Array.from({ length: producers }, (_, p) => produce(p)), killRedis()];
const started = Date.now();
const progress = setInterval(() => {
  const elapsed = Math.round((Date.now() - started) / 1000);
  log(`redis-kill: t=${elapsed}s acknowledged=${acknowledged.size} refusals=${refusals} kills=${kills}`);
}, 5_000);
await sleep(seconds * 1000);
producing = false;
await Promise.all(running);
clearInterval(progress);
log(`redis-kill: producers stopped at ${acknowledged.size} acknowledged; waiting for their answers`);
await waitFor(() => [...acknowledged].every((token) => quoted().has(token)), {
  what: 'an answer to every acknowledged message',
  timeoutMs: 180_000,
  intervalMs: 500,
}).catch((error: Error) => log(`redis-kill: ${error.message}`));

const answered = quoted();
const lost = [...acknowledged].filter((token) => !answered.has(token));
const requestIds = replies().map((call) => String((call.body as { request_id?: string }).request_id));
const postedTwice = requestIds.length - new Set(requestIds).size;
const notDelivered = workers
  .flatMap((w) => w.stdout().split('\n'))
  .filter((line) => line.includes('reply not delivered'));

for (const worker of workers) worker.child.kill('SIGTERM');
ingress.child.kill('SIGTERM');
await Promise.all([...workers, ingress].map((p) => p.exited()));
await api.close();
await redis.stop();

log(`redis-kill: refusals retried=${refusals}; 'reply not delivered' warnings=${notDelivered.length}`);
for (const line of notDelivered.slice(0, 3)) log(`redis-kill: ${line}`);
if (lost.length > 0) log(`redis-kill: lost ${lost.slice(0, 10).join(', ')}`);
process.stdout.write(
  `redis-kill: acknowledged=${acknowledged.size} answered=${acknowledged.size - lost.length} lost=${lost.length} ` +
    `replies=${requestIds.length} posted_twice=${postedTwice} kills=${kills}\n`,
);
process.exit(lost.length + postedTwice === 0 ? 0 : 1);
