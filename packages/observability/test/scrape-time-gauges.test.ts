import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/index.js';

describe('gauges computed at scrape time', () => {
  it('runs a read once per scrape and reports what it set', async () => {
    const metrics = createMetrics();
    let reads = 0;
    metrics.onScrape([metrics.backlogMessages, metrics.threadsRunnable, metrics.bullmqJobs], async () => {
      reads += 1;
      metrics.backlogMessages.set(7);
      metrics.threadsRunnable.set(3);
      metrics.bullmqJobs.set({ state: 'waiting' }, 2);
    });

    const text = await metrics.registry.metrics();

    expect(reads).toBe(1);
    expect(text).toContain('tributary_backlog_messages 7');
    expect(text).toContain('tributary_threads_runnable 3');
    expect(text).toContain('tributary_bullmq_jobs{state="waiting"} 2');
  });

  it('shows no stale value after a failed read, counts it, and keeps the rest of the scrape', async () => {
    const metrics = createMetrics();
    let redisUp = true;
    metrics.onScrape([metrics.backlogMessages, metrics.bullmqJobs], () => {
      if (!redisUp) throw new Error('connection refused');
      metrics.backlogMessages.set(5);
      metrics.bullmqJobs.set({ state: 'active' }, 1);
    });
    metrics.onScrape([metrics.acpSessionsLive], () => metrics.acpSessionsLive.set(2));
    await metrics.registry.metrics();

    redisUp = false;
    const failed = await metrics.registry.metrics();

    const backlog = await metrics.backlogMessages.get();
    expect(backlog.values.map((value) => value.value)).toEqual([Number.NaN]);
    expect(failed).not.toContain('tributary_bullmq_jobs{');
    expect(failed).toContain('tributary_scrape_read_failures_total 1');
    expect(failed).toContain('tributary_acp_sessions_live 2');

    redisUp = true;
    expect(await metrics.registry.metrics()).toContain('tributary_backlog_messages 5');
  });

  it('says why a read failed, at warn with the error, once per condition rather than once a scrape', async () => {
    const lines: { level: string; fields: Record<string, unknown>; message: string | undefined }[] = [];
    const log = (level: string) => (fields: object, message?: string) =>
      lines.push({ level, fields: fields as Record<string, unknown>, message });
    const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    const metrics = createMetrics(undefined, { logger });
    let failure: Error | undefined = new Error('NOPERM this user has no permissions to run the info command');
    metrics.onScrape([metrics.threadsRunnable, metrics.backlogMessages], () => {
      if (failure) throw failure;
      metrics.threadsRunnable.set(1);
    });

    for (let scrape = 0; scrape < 5; scrape++) await metrics.registry.metrics();
    failure = new Error('Connection is closed.');
    await metrics.registry.metrics();
    failure = undefined;
    await metrics.registry.metrics();

    expect(lines.map((line) => [line.level, line.fields.err])).toEqual([
      ['warn', expect.objectContaining({ message: expect.stringContaining('NOPERM') })],
      ['warn', expect.objectContaining({ message: 'Connection is closed.' })],
      ['info', undefined],
    ]);
    expect(lines[0]!.message).toContain('tributary_threads_runnable,tributary_backlog_messages');
    expect(lines[0]!.message).toContain('NaN');
    expect(await metrics.registry.metrics()).toContain('tributary_scrape_read_failures_total 6');
  });
});
