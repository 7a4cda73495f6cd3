/**
 * Intake CPU (docs/adr/0012): a real ingress process gets signed messages of 1 KB to 4 MB in the
 * shapes that used to cost superlinear time, one at a time. Per shape and size it prints the ingress
 * process's CPU time per request (process.cpuUsage of that process, read over IPC before and after),
 * and the p99 latency of small unrelated messages sent back to back while the big one is processed.
 * Baselines from the same run: the CPU of a trivial message, and the p99 of the small messages when
 * nothing else runs; the table gives both ratios.
 *
 *   npm run bench:intake [-- --quick] [-- --max-size 200000] [-- --smoke]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { signedRequestHeaders, slackSignature } from '@tributary/platforms';
import { freePort, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { formatTable, resultOptions, writeBenchResult } from './bench-result.js';
import { median, percentile } from './stats.js';

const { values } = parseArgs({
  options: { ...resultOptions, quick: { type: 'boolean', default: false }, 'max-size': { type: 'string' } },
});
// A smoke run is the quick run at its smallest size: it proves the benchmark works, in seconds.
const quick = values.quick || values.smoke;
const maxSize = Number(values['max-size'] ?? (values.smoke ? 1_000 : Number.POSITIVE_INFINITY));
const SIZES = (quick ? [1_000, 200_000] : [1_000, 10_000, 100_000, 200_000, 1_000_000, 4_000_000]).filter(
  (size) => size <= maxSize,
);
/** Requests per case, for the CPU figure and again for the concurrent latency. */
const reps = (size: number) => (quick ? 2 : size >= 1_000_000 ? 3 : 6);
const log = (line: string) => process.stderr.write(`${line}\n`);

const GATEWAY_SECRET = 'bench-gateway-secret';
const SLACK_SECRET = 'bench-slack-signing-secret';
const SELF = 'U0BOT';
const prose = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

const repeatTo = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

interface Shape {
  name: string;
  /** The body for this size; `ID` marks where each request's unique id goes. */
  body(size: number): { route: 'slack' | 'gateway'; template: string };
}

const ID = '__ID__';

function slackTemplate(text: string) {
  const event = { type: 'message', channel: 'D0BENCH', channel_type: 'im', user: 'U0ALICE', text, ts: ID };
  return {
    route: 'slack' as const,
    template: JSON.stringify({ type: 'event_callback', event_id: `Ev${ID}`, event }),
  };
}

function gatewayTemplate(text: string, file?: string) {
  const attachments =
    file === undefined
      ? undefined
      : [
          {
            type: 'text_file',
            filename: 'build.log',
            mime_type: 'text/plain',
            data: Buffer.from(file).toString('base64'),
            size: Buffer.byteLength(file),
          },
        ];
  const event = {
    schema: 'openab.gateway.event.v1',
    event_id: `evt-${ID}`,
    timestamp: '2025-01-01T09:30:00.000Z',
    platform: 'bench',
    event_type: 'message',
    channel: { id: 'room', type: 'group', thread_id: `t-${ID}` },
    sender: { id: 'ualice', name: 'alice', display_name: 'Alice', is_bot: false },
    content: { type: 'text', text, ...(attachments ? { attachments } : {}) },
    mentions: [],
    message_id: `m-${ID}`,
  };
  return { route: 'gateway' as const, template: JSON.stringify(event) };
}

const SHAPES: Shape[] = [
  { name: 'prose text', body: (size) => slackTemplate(repeatTo(prose, size)) },
  { name: 'one long word', body: (size) => slackTemplate('x'.repeat(size)) },
  { name: 'blank runs, mention', body: (size) => slackTemplate(`<@${SELF}> run${'\t'.repeat(size)}end`) },
  {
    name: 'many mentions',
    // Closed mentions, ours and others', then half-open ones that no '>' follows.
    body: (size) =>
      slackTemplate(repeatTo(`<@${SELF}> <@W0BOB|bob> `, size / 2) + repeatTo(`<@${SELF}|`, size / 2)),
  },
  {
    name: 'text_file, log lines',
    body: (size) => gatewayTemplate('see attached', repeatTo(logLines(), size)),
  },
  { name: 'text_file, one word', body: (size) => gatewayTemplate('see attached', 'x'.repeat(size)) },
];

function logLines(): string {
  return Array.from(
    { length: 200 },
    (_, i) =>
      `2025-01-01T09:30:${String(i % 60).padStart(2, '0')}Z build step ${i}: ${i % 9 ? 'ok' : 'FAIL src/app.ts(12,3): TS2345'}\n`,
  ).join('');
}

// --- the ingress process -------------------------------------------------------------------------

const redis = await startRedis({ private: true });
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));
const probe = fileURLToPath(new URL('./intake-cpu-probe.ts', import.meta.url));
const child = spawn(process.execPath, ['--import', 'tsx', '--import', probe, bin, 'ingress'], {
  env: {
    PATH: process.env.PATH,
    REDIS_URL: redis.url,
    REDIS_PREFIX: uniquePrefix('bench-intake'),
    PORT: String(port),
    HOST: '127.0.0.1',
    GATEWAY_SECRET,
    SLACK_SIGNING_SECRET: SLACK_SECRET,
    SLACK_BOT_USER_ID: SELF,
    BODY_LIMIT_BYTES: String(32 * 1024 * 1024),
    RATE_LIMIT_PER_MINUTE: '10000000',
    MAX_THREAD_BACKLOG: '100000',
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
});
let output = '';
child.stdout!.on('data', (chunk) => {
  output += chunk;
});
child.stderr!.on('data', (chunk) => {
  output += chunk;
});

try {
  await waitFor(async () => (await fetch(`${url}/livez`).catch(() => undefined))?.ok || undefined, {
    what: `ingress to listen (${output})`,
    timeoutMs: 30_000,
  });
  await run(url, child);
} finally {
  child.kill('SIGKILL');
  await redis.stop();
}

// --- measuring -----------------------------------------------------------------------------------

async function run(url: string, ingress: ChildProcess): Promise<void> {
  let seq = 0;
  /** Sends one request made from the template with a fresh id; resolves to its latency in ms. */
  const send = async (route: 'slack' | 'gateway', template: string): Promise<number> => {
    seq++;
    const id = route === 'slack' ? `${1735723800 + seq}.000100` : `bench-${seq}`;
    const body = template.replaceAll(ID, id);
    let headers: Record<string, string> = { 'content-type': 'application/json' };
    if (route === 'slack') {
      const timestamp = String(Math.floor(Date.now() / 1000));
      headers['x-slack-request-timestamp'] = timestamp;
      headers['x-slack-signature'] = slackSignature(SLACK_SECRET, timestamp, body);
    } else {
      headers = { ...headers, ...signedRequestHeaders(GATEWAY_SECRET, body) };
    }
    const started = performance.now();
    const answer = await fetch(`${url}/webhooks/${route}`, { method: 'POST', headers, body });
    const text = await answer.text();
    const elapsed = performance.now() - started;
    if (answer.status !== 200 || !text.includes('"accepted"')) {
      throw new Error(`${route} request answered ${answer.status}: ${text.slice(0, 200)}`);
    }
    return elapsed;
  };
  /** The ingress process's CPU time so far, and its longest event-loop stall since the last call. */
  const probe = async (): Promise<{ cpuMs: number; stallMs: number }> => {
    const reply = once(ingress, 'message');
    ingress.send('probe');
    const [{ cpu, stallMs }] = (await reply) as [{ cpu: NodeJS.CpuUsage; stallMs: number }];
    return { cpuMs: (cpu.user + cpu.system) / 1000, stallMs };
  };
  const small = gatewayTemplate('is the build green yet? '.repeat(40)).template;
  const trivial = gatewayTemplate('hi').template;

  log('intake: warming up');
  for (let i = 0; i < 200; i++) await send('gateway', small);
  // One of each shape first, so that the first case of a shape does not pay for compiling its paths.
  for (const shape of SHAPES) {
    const { route, template } = shape.body(10_000);
    for (let i = 0; i < 3; i++) await send(route, template);
  }

  // Baselines: a trivial message's CPU, and small messages' latency with nothing else running.
  const baseCpu: number[] = [];
  const baseStall: number[] = [];
  for (let i = 0; i < 50; i++) {
    const before = await probe();
    await send('gateway', trivial);
    const after = await probe();
    baseCpu.push(after.cpuMs - before.cpuMs);
    baseStall.push(after.stallMs);
  }
  const idle: number[] = [];
  for (let i = 0; i < 500; i++) idle.push(await send('gateway', small));
  const baseCpuMs = median(baseCpu);
  const idleP99 = percentile(idle, 99);

  const rows: string[][] = [];
  for (const shape of SHAPES) {
    for (const size of SIZES) {
      const { route, template } = shape.body(size);
      const cpu: number[] = [];
      const stall: number[] = [];
      const wall: number[] = [];
      for (let i = 0; i < reps(size); i++) {
        const before = await probe();
        wall.push(await send(route, template));
        const after = await probe();
        cpu.push(after.cpuMs - before.cpuMs);
        stall.push(after.stallMs);
      }
      // Again, with small messages sent back to back until the big one is answered.
      const concurrent: number[] = [];
      for (let i = 0; i < reps(size); i++) {
        let done = false;
        const big = send(route, template).finally(() => {
          done = true;
        });
        while (!done) concurrent.push(await send('gateway', small));
        await big;
      }
      const cpuMedian = median(cpu);
      const p99 = percentile(concurrent, 99);
      rows.push([
        shape.name,
        kb(size),
        kb(template.length),
        cpuMedian.toFixed(2),
        (cpuMedian / baseCpuMs).toFixed(1),
        ((1000 * Math.max(0, cpuMedian - baseCpuMs)) / (size / 1024)).toFixed(1),
        median(wall).toFixed(1),
        median(stall).toFixed(1),
        p99.toFixed(2),
        String(concurrent.length),
        (p99 / idleP99).toFixed(1),
      ]);
      log(`intake: ${shape.name} ${kb(size)} done`);
    }
  }

  process.stdout.write(
    `\nIngress CPU per request (process.cpuUsage of the ingress process) and p99 of small messages sent during it.\n` +
      `stall ms: the longest event-loop stall inside ingress during the request (median over requests).\n` +
      `Baselines: trivial message ${baseCpuMs.toFixed(2)} ms CPU, ${median(baseStall).toFixed(1)} ms stall; ` +
      `small messages alone p50 ${percentile(idle, 50).toFixed(2)} ms, p99 ${idleP99.toFixed(2)} ms.\n\n`,
  );
  const columns = [
    'shape',
    'input',
    'body',
    'cpu ms',
    '× trivial',
    'µs/KB',
    'wall ms',
    'stall ms',
    'small p99 ms',
    'n',
    '× idle p99',
  ];
  process.stdout.write(`${formatTable(columns, rows)}\n`);
  const worst = (column: string) => Math.max(...rows.map((row) => Number(row[columns.indexOf(column)])));
  await writeBenchResult(values, {
    name: 'intake',
    title: 'Intake CPU and loop stall per request for hostile bodies',
    columns,
    rows: rows.map((row) => row.map((cell, i) => (i >= 3 ? Number(cell) : cell))),
    ratios: {
      worst_cpu_over_trivial: worst('× trivial'),
      worst_small_p99_over_idle_p99: worst('× idle p99'),
    },
    notes: [
      `Baselines: trivial message ${baseCpuMs.toFixed(2)} ms CPU; small messages alone p99 ${idleP99.toFixed(2)} ms.`,
    ],
  });
}

function kb(chars: number): string {
  return chars >= 1_000_000 ? `${(chars / 1_000_000).toFixed(1)} MB` : `${Math.round(chars / 1000)} KB`;
}
