/**
 * The baselines of bench/ingress.ts: a bare Fastify server that takes the same signed JSON webhook as
 * a raw buffer and answers 200, and (`--script`) the same plus one Lua script per request that does
 * what any durable queue must (XADD the body to a stream). Started as its own process, like ingress.
 *
 * bench/e2e.ts's HTTP floor adds `--call-url <url> --calls-per-request <k>` to `--script`: after each
 * accepted request, k POSTs to the platform as a broker on that path must make (k may be fractional: the
 * remainder is carried, so n requests make n × k calls in all).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { gatewayCommandBody } from '@tributary/platforms';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { request } from 'undici';

const { values } = parseArgs({
  options: {
    redis: { type: 'string' },
    script: { type: 'boolean', default: false },
    'call-url': { type: 'string' },
    'calls-per-request': { type: 'string', default: '0' },
  },
});
const redis = values.script ? new Redis(values.redis!) : undefined;
const XADD = "return redis.call('XADD', KEYS[1], '*', 'body', ARGV[1])";
redis?.defineCommand('benchXadd', { numberOfKeys: 1, lua: XADD });
const callUrl = values['call-url'];
const callsPerRequest = Number(values['calls-per-request']);
if (callUrl && !redis) throw new Error('--call-url is for the HTTP floor, which stores too: add --script');
let credit = 0;

/** One platform call as the gateway client makes it: an openab reaction, kept-alive, with a timeout. */
async function platformCall(): Promise<void> {
  const requestId = randomUUID();
  const target = { platform: 'bench', channelId: 'room', threadId: 't-2', messageId: 'm-1-2-3' };
  const body = JSON.stringify(gatewayCommandBody(target, 'add_reaction', '👀', requestId));
  // undici's global dispatcher keeps a pool of kept-alive connections per origin, as the product's is.
  const answer = await request(callUrl!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': requestId },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  JSON.parse(await answer.body.text());
}

function makeCalls(): void {
  credit += callsPerRequest;
  // The epsilon keeps a float sum such as 0.1 × 10 from falling one call short.
  for (; credit >= 1 - 1e-9; credit--) {
    platformCall().catch((error: unknown) => {
      // The e2e bench waits for every call to reach its gateway, so a lost one stops it there.
      process.stderr.write(`bare webhook server: platform call failed: ${String(error)}\n`);
    });
  }
}

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/webhooks/gateway', async (request) => {
  const body = request.body as Buffer;
  if (!redis) return { ok: true, outcome: 'accepted' };
  const id = await (redis as unknown as { benchXadd(key: string, body: Buffer): Promise<string> }).benchXadd(
    'bench:bare:inbox',
    body,
  );
  // Not awaited: the answer does not wait for the platform, as ingress's 👀 does not.
  if (callUrl) makeCalls();
  return { ok: true, outcome: 'accepted', id };
});
app.get('/livez', async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
