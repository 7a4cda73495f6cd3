/**
 * Conversation economy: the same chat workloads replayed through ingress → worker → the built-in
 * agent under Tributary's processing modes and under three dispatch policies chat bots commonly use.
 * Counts agent turns, lost messages, how long each message waits for its first answer, when the last
 * answer comes, and the conversation history re-fed to the agent (openab RFC's accounting: every turn
 * re-sends the prompts and replies of the turns before it).
 *
 *   npm run bench:economy [-- --scale 10] [-- --smoke]
 *
 * Workload time runs `scale` times faster than real time (turns, gaps, the debounce window and queue
 * expiry alike), so a 10 s turn takes 1 s at the default scale. The broker's own latency is real time
 * and is scaled up with the rest: figures include `scale` × its milliseconds.
 */
import { parseArgs } from 'node:util';
import { type Stack, startStack } from '../test/stack/stack-fixture.js';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { Replay, type ReplayResult } from './economy/replay.js';
import { type Strategy, strategies } from './economy/strategies.js';
import { midTurnMessages, workloads } from './economy/workloads.js';
import { rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, scale: { type: 'string' } } });
const scale = sizeOption(values, 'scale', 10, 100);
const log = (line: string) => process.stderr.write(`${line}\n`);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Workload seconds to a tenth; '-' when no message of the replay was answered. */
const seconds = (ms: number): Cell => (Number.isFinite(ms) ? Math.round(ms / 100) / 10 : '-');

interface Figures {
  turns: number;
  lost: number;
  firstAnswerP50: number;
  firstAnswerMax: number;
  /** First answer p50 of the messages sent mid-turn (midTurnMessages); NaN where the workload has none. */
  midTurnP50: number;
  lastAnswer: number;
  historyTokens: number;
}

function figures({ workload, sentAt, turns }: ReplayResult): Figures {
  const answeredAt = new Map<number, number>();
  for (const turn of turns) {
    for (const index of turn.messages) if (!answeredAt.has(index)) answeredAt.set(index, turn.answeredAt);
  }
  const waits = [...answeredAt].map(([index, at]) => at - sentAt[index]!).sort((a, b) => a - b);
  const midTurn = midTurnMessages(workload)
    .filter((index) => answeredAt.has(index))
    .map((index) => answeredAt.get(index)! - sentAt[index]!)
    .sort((a, b) => a - b);
  let history = 0;
  let historyTokens = 0;
  for (const turn of turns) {
    historyTokens += history;
    history += turn.promptTokens + turn.replyTokens;
  }
  return {
    turns: turns.length,
    lost: workload.messages.length - answeredAt.size,
    firstAnswerP50: waits.length ? percentile(waits, 50) : Number.NaN,
    firstAnswerMax: waits.at(-1) ?? Number.NaN,
    midTurnP50: midTurn.length ? percentile(midTurn, 50) : Number.NaN,
    lastAnswer: turns.length ? Math.max(...turns.map((t) => t.answeredAt)) : Number.NaN,
    historyTokens,
  };
}

/** The broker a strategy hands its prompts to: its processing mode, with or without steering. */
const stackOf = (strategy: Strategy) => (strategy.steering ? `${strategy.mode}+steering` : strategy.mode);
const kinds = [...new Map(strategies.map((s) => [stackOf(s), s])).values()];
log(`economy: starting ${kinds.length} stacks (${kinds.map(stackOf).join(', ')}); scale ${scale}×`);
const stacks = new Map<string, Stack>();
try {
  for (const kind of kinds) {
    stacks.set(
      stackOf(kind),
      await startStack(
        {
          MESSAGE_PROCESSING_MODE: kind.mode,
          ...(kind.steering ? { STEERING: 'on' } : {}),
          // A thread per replay, each with its own agent session, all of a round at once.
          WORKER_CONCURRENCY: String(workloads.length),
          AGENT_MAX_SESSIONS: String(workloads.length * strategies.length),
          // The multi-bot workload is bots talking; the loop guard is not what is measured here.
          ALLOW_BOT_MESSAGES: 'all',
          MAX_BOT_TURNS: '1000',
        },
        undefined,
        kind.steering ? { TRIBUTARY_AGENT_CAPS: JSON.stringify({ steering: true }) } : {},
      ),
    );
  }
  const rounds = strategies.map((strategy) =>
    workloads.map((w) => new Replay(stacks.get(stackOf(strategy))!, w, strategy, scale)),
  );
  // Every session opens before anything is measured: the stacks share this process's code, so the
  // first strategy does not pay for its first run.
  log(`economy: opening ${rounds.flat().length} agent sessions`);
  await Promise.all(rounds.flat().map((r) => r.warmUp()));
  // One strategy at a time, all workloads at once: every strategy meets the same collisions (five
  // first messages at once, then whatever its own dispatching causes), none another strategy's.
  const results: ReplayResult[] = [];
  for (const round of rounds) {
    log(`economy: ${round[0]!.strategy.name} on ${workloads.length} workloads`);
    results.push(...(await Promise.all(round.map((r) => r.run()))));
  }

  const columns = [
    'workload',
    'strategy',
    'turns',
    'lost',
    'first answer p50 (s)',
    'first answer max (s)',
    'mid-turn first answer p50 (s)',
    'last answer (s)',
    'history re-fed (tokens)',
  ];
  const rows: Cell[][] = [];
  const byKey = new Map<string, Figures>();
  // Workload by workload, so a table's neighbours are the strategies compared on the same traffic.
  const ordered = workloads.flatMap((w) => results.filter((r) => r.workload === w));
  for (const result of ordered) {
    const f = figures(result);
    byKey.set(`${result.workload.name}/${result.strategy.name}`, f);
    rows.push([
      result.workload.name,
      result.strategy.name,
      f.turns,
      f.lost,
      seconds(f.firstAnswerP50),
      seconds(f.firstAnswerMax),
      seconds(f.midTurnP50),
      seconds(f.lastAnswer),
      f.historyTokens,
    ]);
  }
  // Workloads without a figure (no mid-turn message) count for no strategy.
  const sum = (strategy: string, pick: (f: Figures) => number) =>
    workloads.reduce((total, w) => {
      const value = pick(byKey.get(`${w.name}/${strategy}`)!);
      return Number.isFinite(value) ? total + value : total;
    }, 0);
  const ratios: Record<string, number> = {};
  for (const strategy of strategies.filter((s) => s.name !== 'per-thread')) {
    const over = (pick: (f: Figures) => number) =>
      rounded(sum(strategy.name, pick) / sum('per-thread', pick));
    ratios[`${strategy.name}_turns_over_per_thread`] = over((f) => f.turns);
    ratios[`${strategy.name}_history_tokens_over_per_thread`] = over((f) => f.historyTokens);
    // A correction sent mid-turn is answered by the running turn instead of the next one: that is what
    // steering changes. The p50 over all messages also holds each thread's first message, which no
    // strategy can answer sooner than one turn, and so mostly measures the machine (see the notes).
    if (strategy.steering) {
      ratios[`${strategy.name}_mid_turn_first_answer_p50_over_per_thread`] = over((f) => f.midTurnP50);
      ratios[`${strategy.name}_first_answer_p50_over_per_thread`] = over((f) => f.firstAnswerP50);
    }
  }
  for (const strategy of strategies) ratios[`${strategy.name}_lost`] = sum(strategy.name, (f) => f.lost);

  process.stdout.write(`${formatTable(columns, rows)}\n`);
  process.stdout.write(
    `economy: ${Object.entries(ratios)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}\n`,
  );
  const path = await writeBenchResult(values, {
    name: 'economy',
    title: 'Conversation economy: turns, losses, waits and re-fed history per dispatch strategy',
    columns,
    rows,
    ratios,
    charts: [
      { title: 'Agent turns', x: 'strategy', y: 'turns', facet: 'workload' },
      { title: 'Messages lost', x: 'strategy', y: 'lost', facet: 'workload' },
      { title: 'First answer p50 (workload s)', x: 'strategy', y: 'first answer p50 (s)', facet: 'workload' },
      {
        title: 'Mid-turn message: first answer p50 (workload s)',
        x: 'strategy',
        y: 'mid-turn first answer p50 (s)',
        facet: 'workload',
      },
      { title: 'History re-fed (tokens)', x: 'strategy', y: 'history re-fed (tokens)', facet: 'workload' },
    ],
    notes: [
      `Times are workload seconds; the replay ran ${scale}× faster than real time, so the broker's own ` +
        `latency (real milliseconds) counts ${scale}× in them.`,
      'first answer: from a message being sent to the first reply of the turn that carried it; lost ' +
        'messages (never in any turn) are left out.',
      'mid-turn first answer: the same, for the messages sent less than one turn after an earlier message ' +
        'of the workload (a correction or follow-up that arrives while a turn runs); the same messages for ' +
        "every strategy. '-': the workload has none.",
      ...(scale > 10
        ? [
            `At scale ${scale} every real millisecond of broker latency or scheduling delay counts ` +
              `${scale / 1000} workload s: the time columns swing from run to run; compare them at scale 10.`,
          ]
        : []),
      'history re-fed: per turn, the tokens (o200k_base) of every earlier prompt and reply of the workload, ' +
        'summed over the turns.',
      ...workloads.map((w) => `${w.name}: ${w.description}.`),
      ...strategies.map((s) => `${s.name}: ${s.description}.`),
    ],
  });
  log(`economy: wrote ${path}`);
} finally {
  for (const stack of stacks.values()) await stack.close();
}
