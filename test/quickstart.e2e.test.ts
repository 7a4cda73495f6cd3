import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));

function run(args: string[], cwd: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { text: '' };
  child.stdout.on('data', (chunk) => {
    output.text += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output.text += chunk;
  });
  return { child, output };
}

let redis: RedisHandle;
let cwd: string;
let dev: { child: ChildProcess; output: { text: string } };

beforeAll(async () => {
  redis = await startRedis();
  cwd = await mkdtemp(join(tmpdir(), 'tributary-quickstart-'));
  dev = run(['dev'], cwd, {
    REDIS_URL: redis.url,
    REDIS_PREFIX: uniquePrefix('dev'),
    PORT: '0',
    // Only the permission test's agent asks; every other turn is as without it.
    AGENT_PERMISSION_POLICY: 'ask',
  });
  await waitFor(() => dev.output.text.includes('In another terminal'), {
    what: `tributary dev to start; it printed: ${dev.output.text}`,
    timeoutMs: 30_000,
  });
});

afterAll(async () => {
  if (dev.child.exitCode === null) dev.child.kill('SIGKILL');
  await redis.stop();
  await rm(cwd, { recursive: true, force: true });
});

describe('the quick start', () => {
  it('tributary send shows one turn for the first message and one batched turn for the rest', async () => {
    const send = run(
      ['send', 'check the build\n@agent {"delayMs": 1500}', 'actually wait', 'and run e2e'],
      cwd,
      {},
    );
    const [code] = await once(send.child, 'exit');
    expect(send.output.text).toContain('Received 1 message in this turn');
    expect(send.output.text).toContain('Received 2 messages in this turn');
    // Reactions show beside the message they are on, never as replies of the agent.
    expect(send.output.text).toContain('  👀 on "actually wait"');
    expect(send.output.text).toMatch(/ {2}✅ on "and run e2e"/);
    expect(send.output.text).not.toMatch(/← agent:\n\S{1,2}\n/u);
    expect(dev.output.text).toContain('@agent scripting on');
    expect(code).toBe(0);
  });

  it('tributary send shows a permission request and answers it from the terminal', async () => {
    const send = run(
      ['send', '--thread', 'approve', '--answer', 'allow_once', 'deploy it\n@agent {"permission": true}'],
      cwd,
      {},
    );
    const [code] = await once(send.child, 'exit');
    const output = send.output.text;
    expect(output).toContain('← agent asks:\n🔐 The agent asks to run **Scripted execute tool**.');
    expect(output).toContain('   1. allow_once\n   2. allow_always\n   3. reject_once\n   4. reject_always');
    expect(output).toMatch(/→ \S+: allow_once\n/);
    expect(output).toContain('← ✅ **allow_once**, by');
    expect(output).toContain('permission: selected allow-once');
    expect(code).toBe(0);
  });

  it('stops on SIGINT and exits 0', async () => {
    dev.child.kill('SIGINT');
    const [code] = await once(dev.child, 'exit');
    expect(code).toBe(0);
    expect(dev.output.text).toContain('stopping');
  });
});
