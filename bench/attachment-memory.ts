/**
 * A worker's resident memory while its turns carry large files, at the default attachment limits: one
 * `tributary worker` process (4 turns at once, the built-in agent) answering through the testkit's
 * fake gateway, whose file server holds one 10 MB text file every attachment links to. Phases, each
 * waiting for its answers: text-only turns (the baseline), one turn with ten 10 MB files, four such
 * turns at once. The worker's RSS is sampled every 10 ms (/proc/<pid>/status); each phase prints its
 * peak, and the ratios against the baseline. Lease losses and fenced commits are counted from its log.
 *
 *   npm run bench:attachment-memory [-- --files 10 --megabytes 10 --worker-bytes <ATTACHMENT_WORKER_BYTES>]
 *                                   [-- --smoke]
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { queuedArrival } from '@tributary/packing';
import { Store } from '@tributary/queue';
import { startFakePlatformApi, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { runCli } from '../test/support/cli-process.js';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    files: { type: 'string' },
    megabytes: { type: 'string' },
    'worker-bytes': { type: 'string' },
  },
});
const files = sizeOption(values, 'files', 10, 4);
const megabytes = sizeOption(values, 'megabytes', 10, 1);

const redis = await startRedis({ private: true });
const api = await startFakePlatformApi();
const file = api.seedFile({
  name: 'build.log',
  bytes: Buffer.from(`${'x'.repeat(99)}\n`.repeat(megabytes * 10_000)),
  contentType: 'text/plain',
});
const prefix = uniquePrefix('attmem');
const worker = runCli(['worker'], {
  env: {
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    METRICS_PORT: '0',
    WORKER_CONCURRENCY: '4',
    GATEWAY_REPLY_URL: api.urls.gatewayReply,
    GATEWAY_FILES_URL: api.origin,
    REPLY_STREAM_INTERVAL_MS: '0',
    ...(values['worker-bytes'] ? { ATTACHMENT_WORKER_BYTES: values['worker-bytes'] } : {}),
    LOG_LEVEL: 'info',
    HOME: process.env.HOME ?? '',
  },
});
await waitFor(() => worker.stdout().includes('worker started'), { what: 'the worker', timeoutMs: 60_000 });
const store = Store.open({ url: redis.url, connection: { kind: 'patient' }, queue: { prefix } });

async function rssMiB(): Promise<number> {
  const status = await readFile(`/proc/${worker.child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

let sent = 0;
const replies = () => api.calls().filter((call) => call.method === 'reply').length;

/** Sends one message per thread, each with `count` links to the file; the peak RSS until all are answered. */
async function phase(threads: number, count: number): Promise<number> {
  const expected = replies() + threads;
  let peak = await rssMiB();
  const sampler = setInterval(() => {
    void rssMiB().then((rss) => {
      peak = Math.max(peak, rss);
    });
  }, 10);
  await Promise.all(
    Array.from({ length: threads }, (_, t) => {
      sent++;
      const event = queuedArrival(
        {
          eventId: `e-${sent}`,
          platform: 'line',
          channelId: 'room',
          threadId: `t-${sent}`,
          sender: { id: 'u1', name: 'ada', displayName: 'Ada', isBot: false },
          timestamp: new Date().toISOString(),
          text: `${count} logs`,
          attachments: Array.from({ length: count }, (_, i) => ({
            kind: 'link' as const,
            uri: file.gatewayUrl,
            name: `log-${i + 1}.txt`,
            mimeType: 'text/plain',
            source: { platform: 'gateway', ref: file.gatewayUrl, size: file.size },
          })),
          replyRef: `e-${sent}`,
        },
        `line:room:e-${sent}`,
      );
      return store.queue.intake.enqueue(`gateway:line:room:t-${sent}-${t}`, event);
    }),
  );
  await waitFor(() => replies() >= expected, { what: `${threads} answers`, timeoutMs: 300_000 });
  clearInterval(sampler);
  return peak;
}

const idle = await rssMiB();
const phases: [string, number][] = [];
// Twice each, so the first turn's agent start-up and JIT warm-up is not counted as the files' cost.
await phase(4, 0);
phases.push(['text only, 4 turns at once (baseline)', await phase(4, 0)]);
phases.push([`1 turn, ${files} × ${megabytes} MB`, await phase(1, files)]);
phases.push([`4 turns at once, ${files} × ${megabytes} MB each`, await phase(4, files)]);
phases.push([`4 turns at once, ${files} × ${megabytes} MB each, again`, await phase(4, files)]);
const output = worker.stdout();
const leaseLost = output.split('\n').filter((line) => line.includes('lease lost')).length;
const fenced = output.split('\n').filter((line) => line.includes('fenced out')).length;
worker.child.kill('SIGTERM');
await worker.exited();
store.disconnect();
await api.close();
await redis.stop();

const baseline = phases[0]![1];
const columns = ['phase', 'peak RSS MiB', 'over baseline MiB', 'peak over baseline'];
const rows = phases.map(([label, peak]) => [
  label,
  rounded(peak, 1),
  rounded(peak - baseline, 1),
  rounded(peak / baseline),
]);
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
process.stdout.write(
  `attachment-memory: idle ${idle.toFixed(1)} MiB; lease lost ${leaseLost}, fenced out ${fenced}; ` +
    `ATTACHMENT_WORKER_BYTES ${values['worker-bytes'] ?? 'default (64 MiB)'}\n`,
);
const worst = Math.max(...phases.slice(1).map(([, peak]) => peak));
await writeBenchResult(values, {
  name: 'attachment-memory',
  title: "A worker's memory while its turns carry large files",
  columns,
  rows,
  ratios: {
    worst_peak_over_baseline: rounded(worst / baseline),
    worst_added_mib: rounded(worst - baseline, 1),
    lease_lost: leaseLost,
    fenced_out: fenced,
  },
  charts: [{ title: 'Peak RSS', x: 'phase', y: 'peak RSS MiB' }],
  notes: [
    `One worker process (WORKER_CONCURRENCY=4, ATTACHMENT_MAX_TURN_BYTES 24 MiB, ATTACHMENT_WORKER_BYTES ${values['worker-bytes'] ?? '64 MiB'}) and the built-in agent; each attachment links to one ${megabytes} MB text file on the fake gateway's file server.`,
    'RSS of the worker process alone (its agents are processes of their own), sampled every 10 ms; the baseline is a phase of text-only turns after a warm-up phase.',
  ],
});
