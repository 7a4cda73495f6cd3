import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type RedisHandle, startRedis, startRedisCluster, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, type Stack, startStack } from './stack/stack-fixture.js';

const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));
const ACT = 'cli-admin-act-token-0123456789ab';
const READ = 'cli-admin-read-token-0123456789a';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe.each([
  ['one Redis', () => startRedis()],
  ['a 3-primary Redis Cluster', () => startRedisCluster()],
])(
  'tributary admin against a running stack on %s',
  { timeout: 120_000 },
  (_name, start: () => Promise<RedisHandle>) => {
    let server: RedisHandle;
    let stack: Stack;
    beforeAll(async () => {
      server = await start();
      stack = await startStack({ ADMIN_TOKENS: `ops:act:${ACT},viewer:read:${READ}` }, server);
    }, 60_000);
    afterAll(async () => {
      await stack?.close();
      await server?.stop();
    }, 60_000);

    const admin = (args: string[], token = ACT): Promise<Run> =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          [bin, 'admin', ...args],
          {
            env: {
              ...process.env,
              TRIBUTARY_ADMIN_URL: stack.ingress.adminUrl,
              TRIBUTARY_ADMIN_TOKEN: token,
            },
          },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
        );
      });

    it('lists threads as a table and as JSON, and pages through them', async () => {
      for (const chat of [9401, 9402, 9403])
        await postTelegramMessage(stack, chat, chat, '@tributary_bot hi');
      await waitFor(
        async () =>
          JSON.parse((await admin(['threads', '--state', 'idle', '--json'])).stdout).items.length === 3,
        {
          what: 'three idle threads',
          timeoutMs: 30_000,
        },
      );
      const table = await admin(['threads', '--state', 'idle']);
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n')[0]).toMatch(/^THREAD\s+STATUS\s+OWNER\s+LEASE\s+BACKLOG\s+SINCE$/);
      expect(table.stdout).toContain('9401');
      const firstPage = JSON.parse(
        (await admin(['threads', '--state', 'idle', '--limit', '2', '--json'])).stdout,
      );
      expect(firstPage.items).toHaveLength(2);
      const everything = JSON.parse(
        (await admin(['threads', '--state', 'idle', '--limit', '2', '--all-pages', '--json'])).stdout,
      );
      expect(everything.items).toHaveLength(3);
      expect(everything.next).toBeNull();
    });

    it('pauses and resumes threads, re-drives dead letters, and says so in the audit log', async () => {
      const thread = JSON.parse((await admin(['threads', '--json'])).stdout).items[0].thread;
      const paused = await admin(['pause', thread]);
      expect(paused).toMatchObject({ code: 0, stdout: expect.stringContaining('paused') });
      const resumed = await admin(['resume', '--state', 'paused']);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(/threads\.resume: \d+ done, 0 already gone/);

      await postTelegramMessage(
        stack,
        9501,
        9501,
        '@tributary_bot fail\n@agent {"error": "cli test failure"}',
      );
      await waitFor(async () => JSON.parse((await admin(['dead-letters', '--json'])).stdout).total === 1, {
        what: 'a dead letter',
        timeoutMs: 30_000,
      });
      const listed = await admin(['dead-letters']);
      expect(listed.stdout).toContain('cli test failure');
      expect(listed.stdout).toContain('by reason:');
      const dry = await admin(['redrive-letters', '--everything', '--dry-run']);
      expect(dry.stdout.trim()).toBe('matches 1');
      const redriven = await admin(['redrive-letters', '--everything', '--json']);
      expect(JSON.parse(redriven.stdout)).toMatchObject({ result: { done: 1, absent: 0 } });
      const audit = JSON.parse((await admin(['audit', '--json'])).stdout);
      expect(audit.items.map((e: { action: string }) => e.action).slice(0, 3)).toEqual([
        'dead-letters.redrive',
        'threads.resume',
        'threads.pause',
      ]);
    });

    it('exits 3 for what is not there, 4 for a refused token, 2 for a wrong call', async () => {
      expect((await admin(['thread', 'never-seen'])).code).toBe(3);
      expect((await admin(['message', 'no-such-message'])).code).toBe(3);
      expect((await admin(['pause', 'never-seen'])).code).toBe(3);
      const refused = await admin(['pause', 'anything'], READ);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain('may only read');
      expect((await admin(['overview'], 'not-a-token-of-this-stack')).code).toBe(4);
      expect((await admin(['explode'])).code).toBe(2);
      expect((await admin(['redrive-letters'])).code).toBe(2);
      const overview = await admin(['overview']);
      expect(overview).toMatchObject({ code: 0, stdout: expect.stringContaining('dead      ') });
    });
  },
);
