import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchResult, parseBenchResult } from '../bench/bench-result.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let results: string;
let docs: string;

beforeAll(async () => {
  results = await mkdtemp(join(tmpdir(), 'tributary-bench-results-'));
  docs = await mkdtemp(join(tmpdir(), 'tributary-bench-docs-'));
});

afterAll(async () => {
  await rm(results, { recursive: true, force: true });
  await rm(docs, { recursive: true, force: true });
});

/** Runs `bench/<script>.ts` with these arguments; resolves with its exit code and output. */
async function run(script: string, args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', `${script}.ts`), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code: code as number, output };
}

async function smoke(name: string): Promise<BenchResult> {
  const { code, output } = await run(name, ['--smoke', '--results', results]);
  expect(code, output).toBe(0);
  const path = join(results, `${name}.json`);
  return parseBenchResult(await readFile(path, 'utf8'), path);
}

// Seconds-long runs of every benchmark, so none of them rots; their figures are not checked, only
// that each one ran the real thing through and reported it in the shape the report reads.
describe('benchmark smoke runs', () => {
  it('economy replays every workload under every strategy', { timeout: 180_000 }, async () => {
    const result = await smoke('economy');
    expect(result).toMatchObject({
      name: 'economy',
      smoke: true,
      command: 'npm run bench:economy -- --smoke',
    });
    const pairs = result.rows.map((row) => `${row[0]}/${row[1]}`);
    expect(new Set(pairs).size).toBe(30);
    const column = (name: string) => result.columns.indexOf(name);
    for (const row of result.rows) {
      expect(row[column('turns')]).toBeGreaterThan(0);
      if (['per-thread', 'per-lane', 'per-message', 'debounce-2s'].includes(row[1] as string)) {
        expect(row[column('lost')], `${row[0]}/${row[1]} lost messages`).toBe(0);
      }
    }
    expect(result.ratios['per-message_turns_over_per_thread']).toBeGreaterThan(1);
  });

  it('latency compares idle dispatch with plain BullMQ', { timeout: 60_000 }, async () => {
    const result = await smoke('latency');
    expect(result.rows).toHaveLength(2);
    expect(result.ratios.idle_p99_over_bullmq_p99).toBeGreaterThan(0);
  });

  it('takeover re-prompts a killed worker’s turn elsewhere', { timeout: 120_000 }, async () => {
    const result = await smoke('takeover');
    expect(result.rows.map((row) => row[0])).toEqual(['takeover p50', 'takeover max', 'lease']);
  });

  it('intake measures a hostile body against a trivial one', { timeout: 60_000 }, async () => {
    const result = await smoke('intake');
    expect(result.rows.length).toBeGreaterThan(0);
    expect(result.ratios.worst_cpu_over_trivial).toBeGreaterThan(0);
  });

  it('affinity runs with and without session affinity', { timeout: 120_000 }, async () => {
    const result = await smoke('affinity');
    expect(result.rows.map((row) => row[0])).toEqual(['on', 'off (baseline)']);
    expect(result.rows.map((row) => row[result.columns.indexOf('failures')])).toEqual([0, 0]);
  });

  it('agent-memory measures both agents', { timeout: 120_000 }, async () => {
    const result = await smoke('agent-memory');
    expect(result.rows).toHaveLength(2);
    expect(result.ratios.builtin_over_minimal_pss_per_session).toBeGreaterThan(0);
  });

  it('the report renders what ran and names what did not', { timeout: 60_000 }, async () => {
    const { code, output } = await run('report', ['--results', results, '--out', docs, '--readme', '']);
    expect(code, output).toBe(0);
    const page = await readFile(join(docs, 'benchmarks.md'), 'utf8');
    expect(page).toContain('## Conversation economy');
    expect(page).toContain('a smoke run');
    expect(page).toContain('![Agent turns](benchmarks/economy-agent-turns.png)');
    await readFile(join(docs, 'benchmarks', 'economy-agent-turns.png'));
    expect(page).toMatch(/## End-to-end throughput\n\n.*\n\nNot run: no `bench\/results\/e2e.json`/);
  });
});
