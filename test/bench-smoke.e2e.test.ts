import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentDefaults } from '@tributary/acp';
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
    expect(new Set(pairs).size).toBe(35);
    const column = (name: string) => result.columns.indexOf(name);
    for (const row of result.rows) {
      expect(row[column('turns')]).toBeGreaterThan(0);
      if (['per-thread', 'per-lane', 'per-message', 'steering', 'debounce-2s'].includes(row[1] as string)) {
        expect(row[column('lost')], `${row[0]}/${row[1]} lost messages`).toBe(0);
      }
    }
    expect(result.ratios['per-message_turns_over_per_thread']).toBeGreaterThan(1);
    // The figure steering is judged by: corrections sent mid-turn, on the same messages as per-thread.
    expect(result.ratios.steering_mid_turn_first_answer_p50_over_per_thread).toBeGreaterThan(0);
  });

  it('redis-commands counts the commands of whole turns by name', { timeout: 60_000 }, async () => {
    const result = await smoke('redis-commands');
    const total = result.rows.find((row) => row[0] === 'total');
    expect(total?.slice(1).every((cell) => Number(cell) > 0)).toBe(true);
    // A thread going on: enqueue, the hand-over to its owner's list, claim, commit, the reply loop's
    // take, done (which records its one part).
    expect(Math.round(result.ratios.script_calls_per_turn_same_thread!)).toBe(6);
    // A new thread: five of those (no hand-over), and BullMQ's add, take and finish of its doorbell.
    expect(Math.round(result.ratios.script_calls_per_turn_new_thread!)).toBeGreaterThanOrEqual(8);
  });

  it('latency compares idle dispatch with plain BullMQ', { timeout: 60_000 }, async () => {
    const result = await smoke('latency');
    // Both paths, then the four steps of Tributary's.
    expect(result.rows).toHaveLength(6);
    expect(result.rows.slice(2).every((row) => Number(row[1]) >= 0)).toBe(true);
    expect(result.ratios.idle_p50_over_bullmq_p50).toBeGreaterThan(0);
    expect(result.ratios.idle_p99_over_bullmq_p99).toBeGreaterThan(0);
  });

  it('first-prompt measures a new thread’s wait for its agent with and without a warm spare and the sandbox', {
    timeout: 360_000,
  }, async () => {
    const result = await smoke('first-prompt');
    const burst = 2 * agentDefaults.startConcurrency() + 2;
    expect(result.rows.map((row) => row[0])).toEqual([
      ...['bubblewrap', 'off'].flatMap((sandbox) => [
        `with a warm spare (AGENT_WARM_SPARES=1), AGENT_SANDBOX=${sandbox}`,
        `without (AGENT_WARM_SPARES=0), AGENT_SANDBOX=${sandbox}`,
        `a burst of ${burst} at once (WORKER_CONCURRENCY=${burst}), AGENT_SANDBOX=${sandbox}`,
      ]),
      ...[0, agentDefaults.warmSparesMemoryMb, 4096].flatMap((budget) =>
        [1, 2].map(
          (round) =>
            `6 one after another, round ${round} (AGENT_WARM_SPARES_MEMORY_MB=${budget}), AGENT_SANDBOX=bubblewrap`,
        ),
      ),
    ]);
    expect(result.rows.every((row) => Number(row[1]) > 0 && Number(row[2]) >= Number(row[1]))).toBe(true);
    // Every path started agents, and said how long each took.
    expect(result.rows.every((row) => Number(row[4]) > 0)).toBe(true);
    expect(result.ratios.spare_pss_mb).toBeGreaterThan(0);
    expect(result.ratios.spare_pss_mb_unsandboxed).toBeGreaterThan(0);
    expect(result.ratios.start_p50_sandbox_over_off).toBeGreaterThan(0);
    // More starts at once than a worker runs (one per CPU): some waited their turn.
    expect(result.ratios.burst_start_wait_p99_ms).toBeGreaterThan(0);
    // Threads that found no spare ready raised the aim wherever a budget let it grow.
    expect(result.ratios.serial_spares_aimed_at_large_budget).toBeGreaterThan(1);
    expect(result.ratios.serial_round2_p99_ms_large_budget).toBeGreaterThan(0);
  });

  it('takeover re-prompts a killed worker’s turn elsewhere', { timeout: 120_000 }, async () => {
    const result = await smoke('takeover');
    expect(result.rows.map((row) => row[0])).toEqual([
      'takeover p50',
      'takeover max',
      'group kill p50',
      'group kill max',
      'with its warden and agents p50',
      'with its warden and agents max',
      'presence TTL',
      'lease',
    ]);
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

  it('route-fairness measures a quiet route alone, beside a flood in lines, and first in first out', {
    timeout: 120_000,
  }, async () => {
    const result = await smoke('route-fairness');
    expect(result.rows.map((row) => row[0])).toEqual(['alone', 'fair', 'fifo']);
    expect(result.rows.map((row) => row[result.columns.indexOf('failed')])).toEqual([0, 0, 0]);
    expect(result.rows[1]![result.columns.indexOf('flood turns')]).toBeGreaterThan(0);
    expect(result.ratios.fair_p99_over_alone_p99).toBeGreaterThan(0);
  });

  it('agent-memory measures both agents', { timeout: 120_000 }, async () => {
    const result = await smoke('agent-memory');
    expect(result.rows).toHaveLength(2);
    expect(result.ratios.builtin_over_minimal_pss_per_session).toBeGreaterThan(0);
  });

  it('ingress compares accepted webhooks with bare Fastify', { timeout: 120_000 }, async () => {
    const result = await smoke('ingress');
    expect(result.rows.map((row) => row[0])).toEqual([
      'tributary ingress',
      'bare fastify',
      'bare fastify + XADD script',
    ]);
    for (const row of result.rows) expect(row[result.columns.indexOf('req/s')]).toBeGreaterThan(0);
    expect(result.ratios.rps_over_bare_fastify).toBeGreaterThan(0);
    expect(result.ratios.p99_over_bare_fastify_p99).toBeGreaterThan(0);
  });

  it('e2e carries every message through to a reply and counts the turns', { timeout: 180_000 }, async () => {
    const result = await smoke('e2e');
    const ours = (measure: string) =>
      result.rows.find((row) => row[0] === measure)?.[result.columns.indexOf('tributary')];
    expect(ours('turns (jobs)')).toBeGreaterThan(0);
    expect(ours('messages per turn')).toBeGreaterThanOrEqual(1);
    // Redis's CPU is read to the microsecond, so the broker's share is never 0; the agents' comes from
    // /proc in clock ticks, which a smoke run's few turns on live sessions may not reach.
    expect(ours('broker (sum)')).toBeGreaterThan(0);
    expect(ours('agents')).toBeGreaterThanOrEqual(0);
    expect(ours('platform calls')).toBeGreaterThan(1);
    expect(result.ratios.turns_per_second_over_bullmq_jobs).toBeGreaterThan(0);
    // The HTTP floor made its calls (it waits for every one) and, with Redis's XADDs, spent some CPU.
    expect(result.ratios.broker_cpu_over_http_floor).toBeGreaterThan(0);
  });

  it('memory measures bytes per message and what outlives the idle TTL', { timeout: 120_000 }, async () => {
    const result = await smoke('memory');
    const ours = (what: string) =>
      result.rows.find((row) => row[0] === what)?.[result.columns.indexOf('tributary')];
    expect(ours('first message of a thread')).toBeGreaterThan(0);
    expect(ours('right after the last commit')).toBeGreaterThan(0);
    const left = result.rows.filter((row) => String(row[0]).startsWith('idle TTL later: '));
    expect(left.map((row) => row[0])).not.toContain('idle TTL later: state');
    expect(result.ratios.first_over_event_alone).toBeGreaterThan(0);
  });

  it('sweeper compares its doorbell check with getJobState', { timeout: 60_000 }, async () => {
    const result = await smoke('sweeper');
    expect(result.rows.map((row) => row[1])).toEqual([
      'getJobState (baseline)',
      'BullDoorbell.pending',
      'getJobState (baseline)',
      'BullDoorbell.pending',
    ]);
    expect(Object.keys(result.ratios)).toHaveLength(2);
  });

  it('edits times an edit against an enqueue for each size', { timeout: 60_000 }, async () => {
    const result = await smoke('edits');
    expect(result.rows).toHaveLength(8);
    expect(result.ratios.edit_over_enqueue_99_behind).toBeGreaterThan(0);
  });

  it('startup starts every process compiled and through tsx', { timeout: 180_000 }, async () => {
    const result = await smoke('startup');
    expect(result.rows.map((row) => `${row[0]}/${row[1]}`)).toEqual([
      'ingress/tsx',
      'ingress/compiled',
      'worker/tsx',
      'worker/compiled',
      'built-in agent/tsx',
      'built-in agent/compiled',
    ]);
    expect(result.ratios.worker_compiled_over_tsx_ready).toBeGreaterThan(0);
  });

  it('cluster runs on one node and on a 3-primary Cluster', { timeout: 120_000 }, async () => {
    const result = await smoke('cluster');
    expect(result.rows.map((row) => row[0])).toEqual(['one node (baseline)', '3-primary cluster']);
    expect(result.ratios.cluster_over_one_node_messages_per_second).toBeGreaterThan(0);
  });

  it('agent-turns measures a long conversation against a short one', { timeout: 60_000 }, async () => {
    const result = await smoke('agent-turns');
    expect(result.rows).toHaveLength(2);
    expect(result.ratios.cpu_per_turn_late_over_turn_10).toBeGreaterThan(0);
    expect(result.ratios.bytes_per_turn_late_over_turn_10).toBeGreaterThan(0);
  });

  it('sandbox-turns runs the same turns with no sandbox, in bubblewrap and through an agent host', {
    timeout: 120_000,
  }, async () => {
    const result = await smoke('sandbox-turns');
    expect(result.rows.map((row) => `${row[0]} ${row[1]}`)).toEqual([
      'off text',
      'off shell',
      'bubblewrap text',
      'bubblewrap shell',
      'agent-host text',
      'agent-host shell',
    ]);
    for (const sandbox of ['bubblewrap', 'agent_host']) {
      for (const turn of ['text', 'shell']) {
        expect(result.ratios[`${sandbox}_${turn}_p50_over_off`]).toBeGreaterThan(0);
        expect(result.ratios[`${sandbox}_${turn}_cpu_over_off`]).toBeGreaterThan(0);
      }
    }
  });

  it('scale runs 1 and 2 workers under the closed load and counts agent processes', {
    timeout: 120_000,
  }, async () => {
    const result = await smoke('scale');
    const column = (name: string) => result.columns.indexOf(name);
    expect(result.rows.map((row) => row[0])).toEqual([1, 2]);
    for (const row of result.rows) {
      expect(row[column('turns/s')]).toBeGreaterThan(0);
      // Every thread had a session by the end of the warm-up, each in an agent process of its own.
      expect(row[column('peak agent processes')]).toBeGreaterThan(0);
      expect(row[column('agent starts/turn')]).toBeGreaterThanOrEqual(0);
    }
    expect(result.ratios.efficiency_2_workers).toBeGreaterThan(0);
    expect(result.ratios.agent_processes_per_thread).toBeGreaterThan(0);
  });

  it('scale runs on a Redis Cluster with two ingress processes under the open load', {
    timeout: 120_000,
  }, async () => {
    const elsewhere = join(results, 'scale-cluster');
    const args = ['--smoke', '--cluster', '--load', 'open', '--workers', '1', '--ingress', '2'];
    const { code, output } = await run('scale', [...args, '--results', elsewhere]);
    expect(code, output).toBe(0);
    const path = join(elsewhere, 'scale.json');
    const result = parseBenchResult(await readFile(path, 'utf8'), path);
    expect(result.command).toBe(`npm run bench:scale -- ${args.join(' ')}`);
    expect(result.rows[0]![result.columns.indexOf('msgs/s')]).toBeGreaterThan(0);
    expect(result.rows[0]![result.columns.indexOf('busiest ingress cores')]).toBeGreaterThan(0);
  });

  it('replica-ack compares acknowledging with and without a replica on a Cluster with replicas', {
    timeout: 120_000,
  }, async () => {
    const result = await smoke('replica-ack');
    expect(result.rows.map((row) => row[0])).toEqual([
      'REDIS_ACK_REPLICAS=0 (baseline)',
      'auto (default: WAIT 1)',
    ]);
    expect(result.ratios.auto_over_off_ack_p50).toBeGreaterThan(0);
  });

  it('attachment-memory samples a worker through turns with and without large files', {
    timeout: 180_000,
  }, async () => {
    const result = await smoke('attachment-memory');
    expect(result.rows).toHaveLength(4);
    expect(result.ratios.worst_peak_over_baseline).toBeGreaterThan(0);
    expect(result.ratios.lease_lost).toBe(0);
  });

  it('dead-letters crashes on one thread and on many, capped and not, and discards them all', {
    timeout: 120_000,
  }, async () => {
    const result = await smoke('dead-letters');
    expect(result.rows.map((row) => row[0])).toEqual([
      'one thread',
      'one thread',
      '1000 threads',
      '1000 threads',
    ]);
    // Whatever the count, a capped thread keeps no more than its cap.
    expect(result.ratios.kept_over_cap_one_thread).toBeLessThanOrEqual(1);
    for (const name of ['overview_bytes', 'overview_redis_time', 'discard_time_per_item']) {
      expect(result.ratios[`${name}_one_thread`]).toBeGreaterThan(0);
      expect(result.ratios[`${name}_spread`]).toBeGreaterThan(0);
    }
  });

  it('the report renders what ran and names what did not', { timeout: 60_000 }, async () => {
    // Every result but latency's, so the page must say that one was not run.
    const partial = join(results, 'without-latency');
    await mkdir(partial);
    for (const file of await readdir(results)) {
      if (file.endsWith('.json') && file !== 'latency.json')
        await copyFile(join(results, file), join(partial, file));
    }
    const { code, output } = await run('report', ['--results', partial, '--out', docs, '--readme', '']);
    expect(code, output).toBe(0);
    const page = await readFile(join(docs, 'benchmarks.md'), 'utf8');
    expect(page).toContain('## Conversation economy');
    expect(page).toContain('a smoke run');
    expect(page).toContain('![Agent turns](benchmarks/economy-agent-turns.png)');
    await readFile(join(docs, 'benchmarks', 'economy-agent-turns.png'));
    expect(page).toContain('![Accepted per second](benchmarks/ingress-accepted-per-second.png)');
    expect(page).toMatch(/## Ingress accept rate\n\n.*\n\n`npm run bench:ingress -- --smoke`/);
    expect(page).toMatch(/## End-to-end throughput\n\n.*\n\n`npm run bench:e2e -- --smoke`/);
    expect(page).toMatch(/## Memory per message\n\n.*\n\n`npm run bench:memory -- --smoke`/);
    expect(page).toMatch(/## Idle dispatch latency\n\n.*\n\nNot run: no `bench\/results\/latency.json`/);
  });
});
