/**
 * The admin API's thread list (docs/adr/0026): the time and the Redis commands one page of 100 costs
 * with 1,000 threads and with 10,000, on the same Redis in the same run. The commands per page do not
 * grow with the threads; the members read do until each bucket holds a page's worth (64 × 101 at most).
 *
 *   npm run bench:admin-listing [-- --threads 10000] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { Store } from '@tributary/queue';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { type Cell, formatTable, resultOptions, sizeOption } from './bench-result.js';
import { rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, threads: { type: 'string' } } });
const most = sizeOption(values, 'threads', 10_000, 2_000);
const SIZES = [most / 10, most];
const PAGE = 100;
const PAGES = 10;

const server = await startRedis({ private: true });
const probe = new Redis(server.url);

/** Commands Redis has run so far (INFO commandstats), the INFO calls themselves included. */
async function commandsRun(): Promise<number> {
  const info = await probe.info('commandstats');
  return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
}

const rows: Cell[][] = [];
const perPage: Record<number, { ms: number; commands: number }> = {};
try {
  for (const threads of SIZES) {
    const store = Store.open({
      url: server.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('bench-list') },
    });
    for (let from = 0; from < threads; from += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, threads - from) }, (_, i) =>
          store.queue.intake.enqueue(`bench:thread-${from + i}`, { id: `m${from + i}`, body: 'x' }),
        ),
      );
    }
    let cursor: string | undefined;
    const before = await commandsRun();
    const started = performance.now();
    for (let page = 0; page < PAGES; page++) {
      const answer = await store.listing.threads('runnable', cursor, PAGE);
      cursor = answer.next;
    }
    const ms = (performance.now() - started) / PAGES;
    const commands = ((await commandsRun()) - before - 1) / PAGES;
    perPage[threads] = { ms, commands };
    rows.push([threads, PAGE, rounded(ms, 2), rounded(commands, 1)]);
    await store.close();
  }
} finally {
  probe.disconnect();
  await server.stop();
}
const [small, large] = SIZES.map((n) => perPage[n!]!);
const columns = ['threads', 'page size', 'ms per page', 'Redis commands per page'];
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
process.stdout.write(
  `\n${rounded(large!.commands / small!.commands, 2)}× the Redis commands and ` +
    `${rounded(large!.ms / small!.ms, 2)}× the time per page with ${most} threads as with ${most / 10}.\n`,
);
