/**
 * The baselines of bench/ingress.ts: a bare Fastify server that takes the same signed JSON webhook as
 * a raw buffer and answers 200, and (`--script`) the same plus one Lua script per request that does
 * what any durable queue must (XADD the body to a stream). Started as its own process, like ingress.
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Redis } from 'ioredis';

const { values } = parseArgs({
  options: { redis: { type: 'string' }, script: { type: 'boolean', default: false } },
});
const redis = values.script ? new Redis(values.redis!) : undefined;
const XADD = "return redis.call('XADD', KEYS[1], '*', 'body', ARGV[1])";
redis?.defineCommand('benchXadd', { numberOfKeys: 1, lua: XADD });

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/webhooks/gateway', async (request) => {
  const body = request.body as Buffer;
  if (redis) {
    const id = await (
      redis as unknown as { benchXadd(key: string, body: Buffer): Promise<string> }
    ).benchXadd('bench:bare:inbox', body);
    return { ok: true, outcome: 'accepted', id };
  }
  return { ok: true, outcome: 'accepted' };
});
app.get('/livez', async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
