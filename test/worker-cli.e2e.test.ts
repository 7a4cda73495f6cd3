import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { queuedArrival } from '@tributary/packing';
import { BullDoorbell, queueConfig, threadQueue } from '@tributary/queue';
import { startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));

describe('tributary worker (real process)', () => {
  it('answers a queued message through the gateway reply URL and exits cleanly on SIGTERM', async () => {
    const server = await startRedis();
    const redis = new Redis(server.url);
    const prefix = uniquePrefix('cli');
    const replies: { body: Record<string, unknown>; raw: string; headers: IncomingHttpHeaders }[] = [];
    const gateway = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const parsed = JSON.parse(body);
        // Reactions come as commands (add_reaction, remove_reaction); this test reads the replies.
        if (parsed.command === undefined) {
          replies.push({ body: parsed, raw: body, headers: req.headers });
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    const secret = 'gateway-secret-value-0042';
    const child = spawn(process.execPath, [bin, 'worker'], {
      env: {
        PATH: process.env.PATH,
        REDIS_URL: server.url,
        REDIS_PREFIX: prefix,
        GATEWAY_REPLY_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/reply`,
        GATEWAY_SECRET: secret,
        LOG_LEVEL: 'debug',
        METRICS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    try {
      // A cold start of the CLI (tsx compiles it) beside the rest of the suite can take this long.
      await waitFor(() => output.includes('worker started'), { what: 'worker start', timeoutMs: 40_000 });
      const config = queueConfig({ prefix });
      const queue = threadQueue(redis, config, new BullDoorbell(redis, config));
      await queue.intake.enqueue(
        'gateway:telegram:C1:T1',
        queuedArrival(
          {
            eventId: 'm-1',
            platform: 'telegram',
            channelId: 'C1',
            threadId: 'T1',
            sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
            timestamp: new Date().toISOString(),
            text: 'hello agent',
            attachments: [],
            replyRef: 'evt_1',
          },
          'telegram:C1:m-1',
        ),
      );
      await waitFor(() => replies.length === 1, { what: 'gateway reply', timeoutMs: 20_000 });
      expect(replies[0]!.body).toMatchObject({
        schema: 'openab.gateway.reply.v1',
        reply_to: 'evt_1',
        platform: 'telegram',
        channel: { id: 'C1', thread_id: 'T1' },
        content: { type: 'text' },
        quote_message_id: 'm-1',
      });
      expect((replies[0]!.body.content as { text: string }).text).toContain('hello agent');
      const { raw, headers } = replies[0]!;
      const timestamp = headers['x-tributary-timestamp'] as string;
      const hmac = createHmac('sha256', secret).update(`v1:${timestamp}:${raw}`).digest('hex');
      expect(headers['x-tributary-signature']).toBe(`v1=${hmac}`);

      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code, `the worker's output ends:\n${output.slice(-4000)}`).toBe(0);
      expect(output).toContain('worker stopped; threads handed back');
      expect(output).not.toContain(secret);
    } finally {
      child.kill('SIGKILL');
      gateway.close();
      redis.disconnect();
      await server.stop();
    }
  }, 90_000);

  it('refuses a bad configuration with a message naming the variable', async () => {
    const child = spawn(process.execPath, [bin, 'worker'], {
      env: { PATH: process.env.PATH, MAX_BATCH_TOKENS: 'lots' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain('configuration error: MAX_BATCH_TOKENS: must be a whole number, got "lots"');
  });
});
