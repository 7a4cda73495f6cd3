import type { BenchResult, Cell } from '../bench-result.js';

/** A benchmark the page has a section for, and how its figures read in a sentence or two. */
export interface Section {
  name: string;
  heading: string;
  /** What is measured against what, for a reader who has not run it. */
  about: string;
  reading(result: BenchResult): string;
  /** The figure the README quotes, in one line. */
  headline(result: BenchResult): string;
}

/** The cell of `column` in the first row whose leading cells equal `keys`. */
function cell(result: BenchResult, keys: string[], column: string): Cell | undefined {
  const at = result.columns.indexOf(column);
  return result.rows.find((row) => keys.every((key, i) => row[i] === key))?.[at];
}

/** The ratios as `name = value`, the reading of a benchmark this page has no words for. */
function ratioReading(result: BenchResult): string {
  const ratios = Object.entries(result.ratios);
  if (ratios.length === 0) return 'The table is the result.';
  return `Ratios against the baseline of the same run: ${ratios.map(([k, v]) => `\`${k}\` = ${v}`).join(', ')}.`;
}

function ratioHeadline(result: BenchResult): string {
  const [name, value] = Object.entries(result.ratios)[0] ?? [];
  return name === undefined ? 'see the table' : `\`${name}\` = ${value}`;
}

function economyReading(r: BenchResult): string {
  const at = (workload: string, strategy: string, column: string) => cell(r, [workload, strategy], column);
  const turns = (w: string, s: string) => at(w, s, 'turns');
  const p50 = (w: string, s: string) => at(w, s, 'first answer p50 (s)');
  const lost = (s: string) => r.ratios[`${s}_lost`];
  return [
    `Over all five workloads, per-message dispatch runs ${r.ratios['per-message_turns_over_per_thread']}× the ` +
      `agent turns of per-thread batching and re-feeds ${r.ratios['per-message_history_tokens_over_per_thread']}× ` +
      'its conversation history;',
    `in the multi-bot burst it is ${turns('multi-bot-burst', 'per-message')} turns against ` +
      `${turns('multi-bot-burst', 'per-thread')}, and per-lane (${turns('multi-bot-burst', 'per-lane')}) ` +
      'batches nothing there because the three bots take turns.',
    `Tributary's three modes lost ${lost('per-thread')}, ${lost('per-lane')} and ${lost('per-message')} messages;` +
      ` the one-slot overwrite buffer lost ${lost('overwrite-slot')} and the drop-oldest queue ${lost('drop-oldest-10')}` +
      ` (debounce ${lost('debounce-2s')}).`,
    `On the quiet thread every message finds the agent idle: it is answered at p50 ` +
      `${p50('quiet-thread', 'per-thread')} s with per-thread, ${p50('quiet-thread', 'per-message')} s with ` +
      `per-message and ${p50('quiet-thread', 'debounce-2s')} s with the 2 s debounce (a 10 s turn, plus ` +
      "the stack's real latency multiplied by the time scale, which also carries the machine's noise).",
    `In the stream of thought, per-thread takes ${turns('stream-of-thought', 'per-thread')} turns (p50 ` +
      `${p50('stream-of-thought', 'per-thread')} s): the first message at once, then everything that arrived ` +
      `during its turn; the debounce waits for quiet and takes ${turns('stream-of-thought', 'debounce-2s')} ` +
      `(p50 ${p50('stream-of-thought', 'debounce-2s')} s), per-message ${turns('stream-of-thought', 'per-message')} ` +
      `(p50 ${p50('stream-of-thought', 'per-message')} s).`,
  ].join(' ');
}

function economyHeadline(r: BenchResult): string {
  return (
    `over five chat workloads, one turn per message costs ${r.ratios['per-message_turns_over_per_thread']}× ` +
    `the agent turns and ${r.ratios['per-message_history_tokens_over_per_thread']}× the re-fed history ` +
    `tokens of per-thread batching, which lost ${r.ratios['per-thread_lost']} messages where a one-slot overwrite buffer lost ` +
    `${r.ratios['overwrite-slot_lost']} and a drop-oldest queue ${r.ratios['drop-oldest-10_lost']}`
  );
}

function latencyReading(r: BenchResult): string {
  const [ours, bull] = r.rows;
  return (
    `An idle thread's first message reaches the turn handler in p50 ${ours?.[1]} ms / p99 ${ours?.[2]} ms; ` +
    `a bare BullMQ job on the same Redis reaches its processor in ${bull?.[1]} / ${bull?.[2]} ms ` +
    `(p99 ratio ${r.ratios.idle_p99_over_bullmq_p99}). No debounce, no polling interval: invariant I1.`
  );
}

function latencyHeadline(r: BenchResult): string {
  const [ours, bull] = r.rows;
  const busy = r.machine?.load1 === undefined ? '' : `; load ${r.machine.load1} on ${r.machine.cpus} CPUs`;
  return (
    `an idle thread's first message starts its turn in p50 ${ours?.[1]} ms, p99 ${ours?.[2]} ms ` +
    `(plain BullMQ on the same Redis: ${bull?.[1]} / ${bull?.[2]} ms${busy})`
  );
}

function takeoverHeadline(r: BenchResult): string {
  const value = (measure: string) => cell(r, [measure], 'ms');
  return (
    `a killed worker's turn runs elsewhere after p50 ${value('takeover p50')} ms ` +
    `(lease: ${value('lease')} ms)`
  );
}

function takeoverReading(r: BenchResult): string {
  const value = (measure: string) => cell(r, [measure], 'ms');
  return (
    `After the worker running a turn is SIGKILLed, another worker re-prompts the same batch in p50 ` +
    `${value('takeover p50')} ms (max ${value('takeover max')} ms): ${r.ratios.takeover_p50_over_lease}× the ` +
    `${value('lease')} ms lease a takeover would wait without worker presence.`
  );
}

export const sections: readonly Section[] = [
  {
    name: 'economy',
    heading: 'Conversation economy',
    about:
      'Scripted chat workloads replayed through ingress, a worker and the built-in agent under Tributary’s ' +
      'processing modes and three common bot dispatch policies, on the same agent timings.',
    reading: economyReading,
    headline: economyHeadline,
  },
  {
    name: 'latency',
    heading: 'Idle dispatch latency',
    about: 'Enqueue to turn-handler start for the first message of an idle thread, against plain BullMQ.',
    reading: latencyReading,
    headline: latencyHeadline,
  },
  {
    name: 'ingress',
    heading: 'Ingress accept rate',
    about: 'Webhooks accepted per second by one ingress process, against a baseline in the same run.',
    reading: ratioReading,
    headline: ratioHeadline,
  },
  {
    name: 'e2e',
    heading: 'End-to-end throughput',
    about: 'Messages from webhook to delivered reply per second through the whole stack.',
    reading: ratioReading,
    headline: ratioHeadline,
  },
  {
    name: 'memory',
    heading: 'Memory per message',
    about: 'Redis and process memory per queued message.',
    reading: ratioReading,
    headline: ratioHeadline,
  },
  {
    name: 'takeover',
    heading: 'Crash takeover',
    about: 'SIGKILL of the worker running a turn until another worker dispatches the same batch again.',
    reading: takeoverReading,
    headline: takeoverHeadline,
  },
];

/** The section of a benchmark this page has no words for: its title, table, charts and ratios. */
export function genericSection(name: string): Section {
  return {
    name,
    heading: '',
    about: `\`npm run bench:${name}\`.`,
    reading: ratioReading,
    headline: ratioHeadline,
  };
}
