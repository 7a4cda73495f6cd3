/**
 * The cost of an edit applied in place, against an enqueue measured in the same run. An edit rewrites
 * the waiting entries from the edited one on (docs/adr/0019-edits-deletes-and-receipts.md), so its cost
 * grows with the entries behind it (up to `editRewriteMax`); this prints by how much, for a few sizes. Rounds alternate an
 * enqueue (into a thread already waiting for its doorbell, so the script alone) and an edit of a
 * thread's first waiting message; each line gives both medians over the round trip and their ratio.
 *
 *   npm run bench:edits [-- --rounds 300] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { Store } from '@tributary/queue';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { median, rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, rounds: { type: 'string' } } });
const rounds = sizeOption(values, 'rounds', 300, 20);
// The edited entry and those behind it stay within the default editRewriteMax (100); past it an
// edit travels as an event of its own.
const SIZES = [0, 10, 50, 99];

const redis = await startRedis();
const store = Store.open({
  url: redis.url,
  connection: { kind: 'patient' },
  queue: { prefix: uniquePrefix('edits'), maxBacklog: SIZES.at(-1)! + rounds + 10 },
});
const queue = store.queue;
const body = (text: string) => JSON.stringify({ text });

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1000;
}

const rows: Cell[][] = [];
const ratios: Record<string, number> = {};
for (const behind of SIZES) {
  const edited = `edited-${behind}`;
  const baseline = `baseline-${behind}`;
  await queue.intake.enqueue(edited, { id: 'first', body: body('first') });
  for (let i = 0; i < behind; i++)
    await queue.intake.enqueue(edited, { id: `m${i}`, body: body(`message ${i}`) });
  await queue.intake.enqueue(baseline, { id: 'warm', body: body('warm') });
  const enqueues: number[] = [];
  const edits: number[] = [];
  for (let round = 0; round < rounds; round++) {
    enqueues.push(
      await timed(() => queue.intake.enqueue(baseline, { id: `b${round}`, body: body(`b ${round}`) })),
    );
    edits.push(
      await timed(async () => {
        const outcome = await queue.intake.revise(edited, {
          action: 'edit',
          messageId: 'first',
          idempotencyKey: `first@${round}`,
          body: body(`first, edit ${round}`),
        });
        if (outcome !== 'applied') throw new Error(`edit ${round} was ${outcome}, not applied`);
      }),
    );
  }
  const enqueueUs = median(enqueues);
  const editUs = median(edits);
  rows.push([behind, 'enqueue (baseline)', Math.round(enqueueUs)], [behind, 'edit', Math.round(editUs)]);
  ratios[`edit_over_enqueue_${behind}_behind`] = rounded(editUs / enqueueUs);
}

await store.close();
await redis.stop();
const columns = ['entries behind', 'operation', 'median µs'];
process.stdout.write(`${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'edits',
  title: 'An edit applied in place, against an enqueue',
  columns,
  rows,
  ratios,
  charts: [{ title: 'Median round trip (µs)', x: 'entries behind', y: 'median µs', group: 'operation' }],
  notes: [
    `${rounds} alternating rounds per size on one local Redis; round trip as the caller sees it.`,
    'entries behind: waiting messages after the edited one, which the edit rewrites (up to editRewriteMax, 100 by default).',
  ],
});
