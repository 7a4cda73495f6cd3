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
function cell(result: BenchResult, keys: Cell[], column: string): Cell | undefined {
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
  const [ours, bull, owned, ...steps] = r.rows;
  const split =
    steps.length === 0
      ? ''
      : ` The new thread's steps at p50: ${steps.map((step) => `${String(step[0]).replace(/^\s*step: /, '')} ${step[1]} ms`).join('; ')}.`;
  return (
    `An idle thread's first message reaches the turn handler in p50 ${ours?.[1]} ms / p99 ${ours?.[2]} ms; ` +
    `a bare BullMQ job on the same Redis reaches its processor in ${bull?.[1]} / ${bull?.[2]} ms ` +
    `(p50 ratio ${r.ratios.idle_p50_over_bullmq_p50}, p99 ratio ${r.ratios.idle_p99_over_bullmq_p99}). ` +
    `A message to an idle thread whose last worker is alive (session affinity) takes ${owned?.[1]} / ${owned?.[2]} ms ` +
    `(ratios ${r.ratios.owned_p50_over_bullmq_p50} and ${r.ratios.owned_p99_over_bullmq_p99}). ` +
    `No debounce, no polling interval: invariant I1.${split}`
  );
}

function latencyHeadline(r: BenchResult): string {
  const [ours, bull, owned] = r.rows;
  const busy = r.machine?.load1 === undefined ? '' : `; load ${r.machine.load1} on ${r.machine.cpus} CPUs`;
  return (
    `an idle thread's first message starts its turn in p50 ${ours?.[1]} ms, p99 ${ours?.[2]} ms, ` +
    `one whose last worker is alive in ${owned?.[1]} / ${owned?.[2]} ms ` +
    `(plain BullMQ on the same Redis: ${bull?.[1]} / ${bull?.[2]} ms${busy})`
  );
}

function firstPromptReading(r: BenchResult): string {
  const [warm, cold, , warmOff, coldOff] = r.rows;
  return (
    `A new thread's first message, from its acknowledgement to the prompt reaching the agent process, with ` +
    `each agent in a bubblewrap sandbox of its own (the default): p50 ${warm?.[1]} ms / p99 ${warm?.[2]} ms with ` +
    `a warm spare agent, ${cold?.[1]} / ${cold?.[2]} ms when the worker must start one ` +
    `(${r.ratios.cold_p99_over_warm_p99}× at p99). Without the sandbox: ${warmOff?.[1]} / ${warmOff?.[2]} ms and ` +
    `${coldOff?.[1]} / ${coldOff?.[2]} ms; an agent start takes ${r.ratios.start_p50_sandbox_over_off}× as long ` +
    `sandboxed (p50). A spare costs about ${r.ratios.spare_pss_mb} MB PSS sandboxed ` +
    `(${r.ratios.spare_pss_mb_unsandboxed} MB without) for the built-in agent; a real coding agent's start ` +
    `takes seconds, which is what a spare hides. New threads one after another, each sent once the previous ` +
    `one's prompt arrived, wait for a start each with one spare (second round p99 ` +
    `${r.ratios.serial_round2_p99_ms_one_spare} ms); the spares grow by one for each thread that found none ` +
    `ready, so with room for them in AGENT_WARM_SPARES_MEMORY_MB the second round took p99 ` +
    `${r.ratios.serial_round2_p99_ms_large_budget} ms (${r.ratios.serial_spares_aimed_at_large_budget} spares), ` +
    `and the shipped 512 MB kept ${r.ratios.serial_spares_aimed_at_shipped_budget} (docs/adr/0047).`
  );
}

function firstPromptHeadline(r: BenchResult): string {
  const [warm, cold] = r.rows;
  const busy = r.machine?.load1 === undefined ? '' : `; load ${r.machine.load1} on ${r.machine.cpus} CPUs`;
  return (
    `a new thread's first message reaches its agent, sandboxed (bubblewrap), ${warm?.[1]} ms (p50) / ` +
    `${warm?.[2]} ms (p99) after it was acknowledged, with a warm spare agent (${cold?.[1]} / ${cold?.[2]} ms ` +
    `starting one; ${r.ratios.spare_pss_mb} MB per spare${busy}); ${r.rows.at(-1)?.[3]} new threads one after another: ` +
    `p99 ${r.ratios.serial_round2_p99_ms_large_budget} ms once the spares grew to ` +
    `${r.ratios.serial_spares_aimed_at_large_budget}, ${r.ratios.serial_round2_p99_ms_one_spare} ms with one`
  );
}

function takeoverHeadline(r: BenchResult): string {
  const value = (measure: string) => cell(r, [measure], 'ms');
  return (
    `a killed worker's turn runs elsewhere after p50 ${value('takeover p50')} ms, ` +
    `${value('group kill p50')} ms when its process group is killed, ` +
    `${value('with its warden and agents p50')} ms when its warden dies with it (lease: ${value('lease')} ms)`
  );
}

function takeoverReading(r: BenchResult): string {
  const value = (measure: string) => cell(r, [measure], 'ms');
  return (
    `After the worker running a turn is SIGKILLed, another worker re-prompts the same batch in p50 ` +
    `${value('takeover p50')} ms (max ${value('takeover max')} ms): ${r.ratios.takeover_p50_over_lease}× the ` +
    `${value('lease')} ms lease a takeover would wait without worker presence. Killing the worker's whole ` +
    `process group changes nothing (p50 ${value('group kill p50')} ms): its warden is not in it. With the ` +
    `warden and the agents killed too, as an OOM-killed container, nothing withdraws the presence and it ` +
    `lapses: p50 ${value('with its warden and agents p50')} ms, max ${value('with its warden and agents max')} ms ` +
    `against a presence TTL of ${value('presence TTL')} ms.`
  );
}

/** The rows of a result as objects keyed by column, for readings that look figures up by name. */
function records(result: BenchResult): Record<string, Cell>[] {
  return result.rows.map((row) => Object.fromEntries(result.columns.map((c, i) => [c, row[i]!])));
}

function ingressFigures(r: BenchResult) {
  const target = (name: string) => ({
    rps: cell(r, [name], 'req/s'),
    p99: cell(r, [name], 'p99 (ms)'),
    cpu: cell(r, [name], 'CPU µs/req'),
  });
  return {
    ours: target('tributary ingress'),
    bare: target('bare fastify'),
    xadd: target('bare fastify + XADD script'),
  };
}

function ingressReading(r: BenchResult): string {
  const { ours, bare, xadd } = ingressFigures(r);
  return (
    `One ingress process accepted ${ours.rps} signed webhooks per second at p99 ${ours.p99} ms. ` +
    `Bare Fastify answering the same requests without checking or storing them did ${bare.rps}/s at p99 ` +
    `${bare.p99} ms, and with one XADD script per request ${xadd.rps}/s at p99 ${xadd.p99} ms. Tributary ` +
    `runs at ${r.ratios.rps_over_bare_fastify}× bare Fastify's rate and ${r.ratios.rps_over_bare_xadd}× the ` +
    `XADD floor, with ${r.ratios.p99_over_bare_fastify_p99}× its p99 and ` +
    `${r.ratios.cpu_per_request_over_bare_fastify}× its CPU per request (${ours.cpu} µs against ${bare.cpu} µs): ` +
    'what it adds is verifying the signature, validating and normalising the event, and storing it durably ' +
    'before answering.'
  );
}

function ingressHeadline(r: BenchResult): string {
  const { ours, bare } = ingressFigures(r);
  return (
    `one ingress process accepts ${ours.rps} signed webhooks/s at p99 ${ours.p99} ms, ` +
    `${r.ratios.rps_over_bare_fastify}× the rate of a bare Fastify server that stores nothing (${bare.rps}/s)`
  );
}

function e2eFigures(r: BenchResult) {
  const ours = (measure: string) => cell(r, [measure], 'tributary');
  const bull = (measure: string) => cell(r, [measure], 'BullMQ no-op (baseline)');
  return {
    turns: ours('turns (jobs)'),
    calls: ours('platform calls'),
    messages: ours('messages'),
    perTurn: ours('messages per turn'),
    ingress: ours('ingress'),
    workers: ours('workers'),
    redis: ours('Redis'),
    broker: ours('broker (sum)'),
    agents: ours('agents'),
    bullJobs: bull('turns (jobs)'),
    bullRedis: bull('Redis'),
    // Undefined in results written before the HTTP floor baseline.
    floor: cell(r, ['broker (sum)'], 'HTTP floor (baseline)') || undefined,
  };
}

/** The HTTP floor's sentence of the reading, or nothing for a result without it. */
function e2eFloorReading(r: BenchResult, f: ReturnType<typeof e2eFigures>): string {
  if (f.floor === undefined) return '';
  const ratio = r.ratios.broker_cpu_over_http_floor;
  return (
    ` The HTTP floor, a bare Node process taking the same webhooks at the round's average rate, storing each with ` +
    `one XADD and making the same ${f.calls} platform calls per message, cost ${f.floor} ms of CPU per ` +
    `turn with Redis's: what any broker on this path pays for HTTP in and out and one durable write` +
    `${ratio === undefined ? '' : `; Tributary's broker CPU is ${ratio}× that`}.`
  );
}

function e2eReading(r: BenchResult): string {
  const f = e2eFigures(r);
  return (
    `Through the whole stack (a real ingress, two workers, the built-in agent, replies posted to a gateway) ` +
    `Tributary completed ${f.turns} turns per second carrying ${f.messages} messages per second: ` +
    `${f.perTurn} messages per turn, because a thread's later messages wait for its running turn and go ` +
    `in the next one together. Each turn cost ${f.broker} ms of broker CPU (ingress ${f.ingress}, workers ` +
    `${f.workers}, Redis ${f.redis}) against ${f.agents} ms in the agent processes` +
    `${r.ratios.broker_cpu_over_agent_cpu === undefined ? '' : ` (${r.ratios.broker_cpu_over_agent_cpu}×)`}. A no-op BullMQ job on the same Redis ran at ${f.bullJobs} jobs/s with ${f.bullRedis} ms of Redis ` +
    `CPU each; Tributary's turn rate is ${r.ratios.turns_per_second_over_bullmq_jobs}× that.` +
    e2eFloorReading(r, f)
  );
}

function e2eHeadline(r: BenchResult): string {
  const f = e2eFigures(r);
  return (
    `${f.turns} turns/s (${f.messages} messages/s, ${f.perTurn} per turn) from webhook to posted reply, ` +
    `${f.broker} ms of broker CPU per turn` +
    (f.floor === undefined ? '' : ` (HTTP floor at the same rate: ${f.floor} ms)`)
  );
}

const IDLE_ROW = 'idle TTL later: ';

function memoryFigures(r: BenchResult) {
  const ours = (what: string) => cell(r, [what], 'tributary');
  const event = (what: string) => cell(r, [what], 'event alone, XADD (baseline)');
  const left = records(r).filter((row) => String(row.what).startsWith(IDLE_ROW));
  return {
    first: ours('first message of a thread'),
    firstEvent: event('first message of a thread'),
    buffered: ours('buffered message'),
    bufferedEvent: event('buffered message'),
    perMessage: ours('per committed message'),
    perThread: ours('per thread after its turns'),
    doorbell: ours('waiting doorbell job'),
    keys: ours('right after the last commit'),
    left: left.map((row) => `${row.tributary} ${String(row.what).slice(IDLE_ROW.length)}`),
    leftTotal: left.reduce((sum, row) => sum + Number(row.tributary), 0),
  };
}

/**
 * Redis preallocates a stream node's 4 KiB with its first entry, so the few entries appended after it
 * measure about 0 B (INFO used_memory moves by a few bytes either way).
 */
function bufferedAlone(bytes: Cell | undefined): string {
  return typeof bytes === 'number' && bytes > 0
    ? `${bytes} B alone`
    : `the event alone measured ${bytes} B: it fills the stream node the first message allocated`;
}

function memoryReading(r: BenchResult): string {
  const f = memoryFigures(r);
  return (
    `The first message of a thread takes ${f.first} B of Redis memory, ${r.ratios.first_over_event_alone}× ` +
    `the ${f.firstEvent} B of storing its event alone with XADD; each further message buffered behind it ` +
    `${f.buffered} B (${bufferedAlone(f.bufferedEvent)}). Once its turns are ` +
    `committed a thread keeps ${f.perThread} B, ${f.perMessage} B per message (history, state, receipts, ` +
    `dedup index), and a waiting doorbell job adds ${f.doorbell} B until a worker takes it. Idle expiry: of ` +
    `${f.keys} thread keys right after the last commit, ${outlived(f)}.`
  );
}

function memoryHeadline(r: BenchResult): string {
  const f = memoryFigures(r);
  return (
    `${f.first} B of Redis for a thread's first message and ${f.buffered} B per further one ` +
    `(the event alone: ${f.firstEvent} B); once idle, of ${f.keys} thread keys ${outlived(f)}`
  );
}

function outlived(f: ReturnType<typeof memoryFigures>): string {
  return f.leftTotal === 0
    ? 'none outlived the idle TTL'
    : `${f.leftTotal} outlived the idle TTL, each on a window of its own (${f.left.join(', ')})`;
}

function sweeperReading(r: BenchResult): string {
  const backlogs = [...new Set(r.rows.map((row) => row[0]))];
  const at = (backlog: Cell | undefined, look: string) => cell(r, [backlog!, look], 'Redis µs');
  const lines = backlogs.map(
    (b) =>
      `${b} waiting: ${at(b, 'getJobState (baseline)')} µs against ${at(b, 'BullDoorbell.pending')} µs ` +
      `(${r.ratios[`getjobstate_over_pending_redis_cpu_at_${b}`]}×)`,
  );
  return (
    "Redis CPU per look at a waiting thread's doorbell, BullMQ's getJobState (an LPOS over the wait list) " +
    `against BullDoorbell.pending (the job's own hash): ${lines.join('; ')}.`
  );
}

function sweeperHeadline(r: BenchResult): string {
  const largest = r.rows.at(-1)?.[0];
  return (
    `with ${largest} doorbells waiting, BullMQ's getJobState costs ` +
    `${r.ratios[`getjobstate_over_pending_redis_cpu_at_${largest}`]}× the Redis CPU of a sweep's doorbell check`
  );
}

function editsReading(r: BenchResult): string {
  const sizes = [...new Set(r.rows.map((row) => row[0]))];
  const lines = sizes.map(
    (n) =>
      `${n} behind: ${cell(r, [n!, 'edit'], 'median µs')} µs against ` +
      `${cell(r, [n!, 'enqueue (baseline)'], 'median µs')} µs (${r.ratios[`edit_over_enqueue_${n}_behind`]}×)`,
  );
  return (
    "An edit rewrites the thread's waiting entries from the edited one on; its round trip against an " +
    `enqueue in the same rounds, by the entries behind it: ${lines.join('; ')}.`
  );
}

function editsHeadline(r: BenchResult): string {
  const largest = r.rows.at(-1)?.[0];
  return `an edit with ${largest} messages behind it costs ${r.ratios[`edit_over_enqueue_${largest}_behind`]}× an enqueue`;
}

function clusterReading(r: BenchResult): string {
  const at = (redis: string, column: string) => cell(r, [redis], column);
  return (
    `Turns committed on a 3-primary Redis Cluster ran at ${at('3-primary cluster', 'messages/s')} messages/s ` +
    `against ${at('one node (baseline)', 'messages/s')} on one node ` +
    `(${r.ratios.cluster_over_one_node_messages_per_second}×), with ` +
    `${at('3-primary cluster', 'commands per message')} Redis commands per message against ` +
    `${at('one node (baseline)', 'commands per message')} (${r.ratios.cluster_over_one_node_commands_per_message}×).`
  );
}

function clusterHeadline(r: BenchResult): string {
  return (
    `a 3-primary Redis Cluster carries ${r.ratios.cluster_over_one_node_messages_per_second}× the messages/s of ` +
    `one node with ${r.ratios.cluster_over_one_node_commands_per_message}× the commands per message`
  );
}

function startupReading(r: BenchResult): string {
  const subjects = [...new Set(r.rows.map((row) => row[0] as string))];
  const lines = subjects.map((subject) => {
    const at = (mode: string, column: string) => cell(r, [subject, mode], column);
    const key = subject.replaceAll(' ', '_');
    return (
      `${subject} ready in ${at('compiled', 'ms to ready')} ms against ${at('tsx', 'ms to ready')} ms ` +
      `(${r.ratios[`${key}_compiled_over_tsx_ready`]}×) with ${at('compiled', 'RSS MB')} MB RSS against ` +
      `${at('tsx', 'RSS MB')} MB (${r.ratios[`${key}_compiled_over_tsx_rss`]}×)`
    );
  });
  return `Compiled ahead of time, as the image runs them, against tsx: ${lines.join('; ')}.`;
}

function startupHeadline(r: BenchResult): string {
  return (
    `compiled JavaScript starts a worker in ${r.ratios.worker_compiled_over_tsx_ready}× the time of tsx ` +
    `with ${r.ratios.worker_compiled_over_tsx_rss}× its memory`
  );
}

function agentTurnsReading(r: BenchResult): string {
  const [early, late] = r.rows;
  return (
    `The built-in agent spent ${early?.[1]} ms of CPU and wrote ${early?.[2]} bytes per turn at turns ${early?.[0]}, ` +
    `and ${late?.[1]} ms and ${late?.[2]} bytes at turns ${late?.[0]} (${r.ratios.cpu_per_turn_late_over_turn_10}× ` +
    `the CPU, ${r.ratios.bytes_per_turn_late_over_turn_10}× the bytes): it appends each history entry to its ` +
    'session file instead of rewriting the whole conversation, so end-to-end figures measure the broker, not ' +
    'how long the benchmark has been talking to the agent.'
  );
}

function agentTurnsHeadline(r: BenchResult): string {
  return (
    `the built-in agent's turn costs ${r.ratios.cpu_per_turn_late_over_turn_10}× the CPU and ` +
    `${r.ratios.bytes_per_turn_late_over_turn_10}× the bytes written late in a long conversation as at turn 10`
  );
}

function scaleReading(r: BenchResult): string {
  const at = (row: Cell[], column: string) => row[r.columns.indexOf(column)];
  const lines = r.rows.map(
    (row) =>
      `${row[0]} worker(s): ${at(row, 'turns/s')} turns/s (efficiency ${at(row, 'efficiency') || 'n/a'}), ` +
      `${at(row, 'agent CPU ms/turn')} ms of agent CPU and ${at(row, 'broker CPU ms/turn')} ms of broker CPU ` +
      `per turn, ${at(row, 'agent starts/turn')} agent starts and ${at(row, 'session moves/turn')} session moves ` +
      `per turn, ${at(row, 'agent processes/thread')} agent processes per thread at the peak`,
  );
  return (
    `Adding workers should add turns, not agent processes. ${lines.join('; ')}. The largest agent starts per ` +
    `turn is ${r.ratios.agent_starts_per_turn} and the most agent processes per thread ` +
    `${r.ratios.agent_processes_per_thread}.`
  );
}

function scaleHeadline(r: BenchResult): string {
  const efficiency = Object.entries(r.ratios).filter(([name]) => name.startsWith('efficiency_'));
  return (
    `${efficiency.map(([name, value]) => `\`${name}\` = ${value}`).join(', ') || 'one worker count'}, ` +
    `${r.ratios.agent_starts_per_turn} agent starts per turn, ${r.ratios.agent_processes_per_thread} agent ` +
    'processes per thread at the peak'
  );
}

function deadLettersReading(r: BenchResult): string {
  const at = (layout: string, column: string) => cell(r, [layout, 10000], column);
  return (
    `10,000 crashing messages leave ${at('one thread', 'kept with caps')} dead letters on one thread ` +
    `(${at('one thread', 'dead letters KB kept')} KB) and ${at('1000 threads', 'kept with caps')} across 1,000 ` +
    `threads (${at('1000 threads', 'dead letters KB kept')} KB); the caps drop the rest, counted. From 1,000 to ` +
    `10,000 crashes on one thread the overview's response grows ${r.ratios.overview_bytes_one_thread}× in bytes ` +
    `and ${r.ratios.overview_redis_time_one_thread}× in Redis time, and a bulk discard costs ` +
    `${r.ratios.discard_time_per_item_one_thread}× per item (across 1,000 threads: ` +
    `${r.ratios.overview_bytes_spread}×, ${r.ratios.overview_redis_time_spread}×, ` +
    `${r.ratios.discard_time_per_item_spread}×).`
  );
}

function deadLettersHeadline(r: BenchResult): string {
  return (
    `10,000 crashes on one thread keep ${cell(r, ['one thread', 10000], 'kept with caps')} dead letters; ` +
    `against 1,000 the overview costs ${r.ratios.overview_redis_time_one_thread}× the Redis time and a discard ` +
    `${r.ratios.discard_time_per_item_one_thread}× the time per item`
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
    name: 'first-prompt',
    heading: 'New thread to the agent’s prompt',
    about:
      "A new thread's first message from its acknowledgement to the prompt reaching the built-in agent, " +
      'on a worker with a warm spare agent and on one without, sample by sample.',
    reading: firstPromptReading,
    headline: firstPromptHeadline,
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
    about:
      'Signed webhooks accepted per second by one ingress process, against a bare Fastify server answering ' +
      'the same requests and the same plus one XADD per request, interleaved in the same run.',
    reading: ingressReading,
    headline: ingressHeadline,
  },
  {
    name: 'e2e',
    heading: 'End-to-end throughput',
    about:
      'Messages from signed webhook to posted reply through ingress, two workers and the built-in agent: ' +
      'turns and messages per second and the CPU each process kind spends per turn, against no-op BullMQ jobs ' +
      'and an HTTP floor: a bare Node process that takes the same webhooks at the round’s average rate, stores each ' +
      'with one XADD and makes the same platform calls, the least any broker on this path spends.',
    reading: e2eReading,
    headline: e2eHeadline,
  },
  {
    name: 'memory',
    heading: 'Memory per message',
    about:
      'Redis memory per message waiting and per thread once its turns are committed, against the event ' +
      'stored alone, and what is left once idle threads expire.',
    reading: memoryReading,
    headline: memoryHeadline,
  },
  {
    name: 'takeover',
    heading: 'Crash takeover',
    about: 'SIGKILL of the worker running a turn until another worker dispatches the same batch again.',
    reading: takeoverReading,
    headline: takeoverHeadline,
  },
  {
    name: 'sweeper',
    heading: "The sweeper's doorbell check",
    about: "The sweeper's look at whether a waiting thread's doorbell is still queued, by backlog size.",
    reading: sweeperReading,
    headline: sweeperHeadline,
  },
  {
    name: 'edits',
    heading: 'Edits in place',
    about: 'An edit of a waiting message, against an enqueue, by the number of messages behind it.',
    reading: editsReading,
    headline: editsHeadline,
  },
  {
    name: 'startup',
    heading: 'Start-up and memory: compiled against tsx',
    about: 'Start-up to ready and resident memory of each process, compiled to JavaScript and through tsx.',
    reading: startupReading,
    headline: startupHeadline,
  },
  {
    name: 'cluster',
    heading: 'Redis Cluster',
    about:
      'Enqueue to committed turn on one Redis node and on a 3-primary Redis Cluster, alternating rounds.',
    reading: clusterReading,
    headline: clusterHeadline,
  },
  {
    name: 'agent-turns',
    heading: "The built-in agent's cost per turn",
    about:
      'CPU and bytes written per turn of the built-in agent late in long conversations, against the same ' +
      'agent process around turn 10 of others, measured in alternation.',
    reading: agentTurnsReading,
    headline: agentTurnsHeadline,
  },
  {
    name: 'scale',
    heading: 'Scale-out',
    about:
      'The end-to-end fleet with 1, 2, … workers under a saturating closed-loop load: turns per second ' +
      'against the same run’s single worker, and what each turn costs in agent processes started, ' +
      'sessions moved between workers and agent processes kept alive.',
    reading: scaleReading,
    headline: scaleHeadline,
  },
  {
    name: 'dead-letters',
    heading: 'Dead letters',
    about:
      'Messages whose agent crashes on every turn, on one thread and spread over 1,000, with the caps on and ' +
      'off: what stays in Redis, what the overview returns and costs, and a bulk discard per item.',
    reading: deadLettersReading,
    headline: deadLettersHeadline,
  },
  {
    name: 'route-fairness',
    heading: 'Fair shares between routes',
    about:
      'A quiet route sends a message about a second while another floods the fleet with 500 threads in ' +
      'waves, limited to 12 of 16 turn slots: the quiet route’s dispatch (acceptance to claim) alone, beside ' +
      'the flood held in its route’s line by its turn limit, and beside the flood let in first in, first out. ' +
      'The runners are processes of their own, as a pool’s workers are, warmed up before each run; the three ' +
      'runs take turns over three rounds (docs/adr/0065).',
    reading: routeFairnessReading,
    headline: routeFairnessHeadline,
  },
];

function routeFairnessReading(r: BenchResult): string {
  const p99 = (run: string) => cell(r, [run], 'quiet p99 ms');
  return (
    `A quiet route's message is dispatched in p99 ${p99('alone')} ms alone, ${p99('fair')} ms beside a route ` +
    `flooding the fleet with threads, the flood's doorbells in its line until one of its turns ends ` +
    `(${r.ratios.fair_p99_over_alone_p99}× alone), ` +
    `and ${p99('fifo')} ms when the flood's doorbells are let in first in, first out ` +
    `(${r.ratios.fifo_p99_over_alone_p99}×). Of the messages that arrived within a second of a flood wave, the ` +
    `slowest waited ${cell(r, ['fair'], 'max within 1 s of a wave, ms')} ms in lines and ` +
    `${cell(r, ['fifo'], 'max within 1 s of a wave, ms')} ms first in, first out. The routes issue asks for a p99 ` +
    'within 1.2× of alone (docs/adr/0063, 0064, 0065).'
  );
}

function routeFairnessHeadline(r: BenchResult): string {
  return (
    `beside a route flooding the fleet, a quiet route's dispatch p99 is ${r.ratios.fair_p99_over_alone_p99}× ` +
    `its p99 alone (${r.ratios.fifo_p99_over_alone_p99}× first in, first out)`
  );
}

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
