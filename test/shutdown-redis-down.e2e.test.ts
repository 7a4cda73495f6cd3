import { queuedArrival } from '@tributary/packing';
import { Store } from '@tributary/queue';
import { startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliRun, runCli } from './support/cli-process.js';

const THREAD = 'gateway:telegram:C1:T1';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup.length = 0;
});

function logLines(run: CliRun): Record<string, unknown>[] {
  return run
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('SIGTERM while Redis is down (real processes)', { timeout: 90_000 }, () => {
  it('the worker exits within its shutdown deadline, kills its agent, and leaves the thread to the sweeper', async () => {
    const redis = await startRedis({ private: true });
    cleanup.push(() => redis.stop());
    const prefix = uniquePrefix('sigterm');
    const store = Store.open({ url: redis.url, connection: { kind: 'patient' }, queue: { prefix } });
    cleanup.push(async () => store.disconnect());
    const worker = runCli(['worker'], {
      env: {
        REDIS_URL: redis.url,
        REDIS_PREFIX: prefix,
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
        SHUTDOWN_GRACE_MS: '1000',
        CANCEL_TIMEOUT_MS: '1000',
        AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
        TRIBUTARY_AGENT_SCRIPTING: 'on',
      },
    });
    cleanup.push(async () => worker.child.kill('SIGKILL'));
    await waitFor(() => worker.stdout().includes('worker started'), {
      what: 'worker start',
      timeoutMs: 30_000,
    });

    // A turn far longer than the grace period holds an agent process.
    await store.queue.intake.enqueue(
      THREAD,
      queuedArrival(
        {
          eventId: 'm-1',
          platform: 'telegram',
          channelId: 'C1',
          threadId: 'T1',
          sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
          timestamp: new Date().toISOString(),
          text: 'a long job\n@agent {"delayMs": 120000}',
          attachments: [],
        },
        'telegram:C1:m-1',
      ),
    );
    await waitFor(() => logLines(worker).some((l) => l.msg === 'dispatch'), { what: 'the turn to start' });
    const agents = logLines(worker)
      .filter((l) => l.msg === 'agent process started')
      .map((l) => Number(l.pid));
    expect(agents.length).toBeGreaterThan(0);

    await redis.kill('SIGKILL');
    const sigterm = performance.now();
    worker.child.kill('SIGTERM');
    const code = await worker.exited();
    const seconds = (performance.now() - sigterm) / 1000;
    // Printed, not asserted: the deadline is SHUTDOWN_GRACE_MS + CANCEL_TIMEOUT_MS (2 s here).
    console.warn(`SIGTERM with Redis down: exited after ${seconds.toFixed(1)} s`);

    expect(code).toBe(0);
    const cutShort = logLines(worker).find((l) => String(l.msg).startsWith('shutdown cut short'));
    expect(cutShort).toMatchObject({ level: 40, deadlineMs: 2000, notHandedBack: 1 });
    expect(agents.filter(alive)).toEqual([]);
    expect(worker.stderr()).not.toContain('Unhandled error event');
  });
});
