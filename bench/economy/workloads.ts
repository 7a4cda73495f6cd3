/**
 * The chat traffic the economy benchmark replays, in workload time (milliseconds from the first
 * message). Timings follow the traffic openab's ADR records: people send at most about three messages
 * in 30 s, and multi-bot threads up to 24 in 60 s.
 */
export interface Speaker {
  id: string;
  name: string;
  isBot: boolean;
}

export interface ScriptedMessage {
  /** When it is sent, in workload milliseconds. */
  at: number;
  from: Speaker;
  text: string;
  /** Carries a screenshot (a PNG attachment). */
  screenshot?: boolean;
}

export interface Workload {
  name: string;
  description: string;
  /** How long the agent takes for every turn of this workload, in workload milliseconds. */
  turnMs: number;
  messages: ScriptedMessage[];
}

const ada: Speaker = { id: 'U1', name: 'ada', isBot: false };
const grace: Speaker = { id: 'U2', name: 'grace', isBot: false };
const bots: Speaker[] = ['ci-bot', 'review-bot', 'deploy-bot'].map((name, i) => ({
  id: `B${i + 1}`,
  name,
  isBot: true,
}));

const SECOND = 1000;
const MINUTE = 60 * SECOND;

const streamOfThought: Workload = {
  name: 'stream-of-thought',
  description: 'one person, 3 follow-ups within 5 s while the 10 s turn for the first runs',
  turnMs: 10 * SECOND,
  messages: [
    { at: 0, from: ada, text: 'check the build on main, it went red after the last merge' },
    { at: 1.5 * SECOND, from: ada, text: 'actually wait' },
    { at: 3 * SECOND, from: ada, text: 'the flaky one is the e2e suite, not the unit tests' },
    {
      at: 4.5 * SECOND,
      from: ada,
      text: 'check the build and run e2e with retries off, then tell me which test fails',
    },
  ],
};

const lateAttachment: Workload = {
  name: 'late-attachment',
  description: 'a question, then the screenshot it is about 8 s later (10 s turns)',
  turnMs: 10 * SECOND,
  messages: [
    { at: 0, from: ada, text: 'why does the login page render like this on Safari?' },
    { at: 8 * SECOND, from: ada, text: '', screenshot: true },
  ],
};

const botReports = [
  'build #812 finished: 3 failed, 1204 passed',
  'PR #77 review: 2 comments on error handling in the upload route',
  'staging deploy of 4f2c1e9 started',
  'flaky test detected: checkout.e2e.ts retried twice',
  'lint warnings: 5 new in packages/api',
  'staging health check: p99 latency 840 ms over the last 5 minutes',
];

/** 24 messages in 60 s from 3 bots in turn, 2.5 s apart (8 s turns). */
const multiBotBurst: Workload = {
  name: 'multi-bot-burst',
  description: '24 messages in 60 s from 3 bots taking turns (8 s turns)',
  turnMs: 8 * SECOND,
  messages: Array.from({ length: 24 }, (_, i) => ({
    at: i * 2.5 * SECOND,
    from: bots[i % bots.length]!,
    text: `${botReports[i % botReports.length]} (report ${i + 1})`,
  })),
};

const adaTopic = [
  'can you bump the redis client to the latest minor?',
  'and check its changelog for breaking changes in cluster mode',
  'also the lockfile needs regenerating after that',
  'run the integration tests against redis 7 when done',
];
const graceTopic = [
  'the invoice PDF has the wrong currency symbol for CHF',
  'it only happens when the locale is de-CH',
  'here is the customer ticket: INV-2231',
  'please add a regression test for it',
];

/** Two people on unrelated topics, alternating every 5 s (8 s turns). */
const interleavedTopics: Workload = {
  name: 'interleaved-topics',
  description: 'two people on unrelated topics, alternating every 5 s (8 s turns)',
  turnMs: 8 * SECOND,
  messages: adaTopic.flatMap((text, i) => [
    { at: i * 10 * SECOND, from: ada, text },
    { at: i * 10 * SECOND + 5 * SECOND, from: grace, text: graceTopic[i]! },
  ]),
};

const quietThread: Workload = {
  name: 'quiet-thread',
  description: 'three isolated questions 90 s apart (10 s turns)',
  turnMs: 10 * SECOND,
  messages: [
    { at: 0, from: ada, text: 'what does the retry policy in the upload client do on a 503?' },
    { at: 1.5 * MINUTE, from: ada, text: 'where is the rate limit for the public API configured?' },
    { at: 3 * MINUTE, from: ada, text: 'which migration added the audit_log table?' },
  ],
};

export const workloads: readonly Workload[] = [
  streamOfThought,
  lateAttachment,
  multiBotBurst,
  interleavedTopics,
  quietThread,
];

/** How long a workload's messages take to send, plus one turn: a lower bound of its replay. */
export function workloadSpanMs(workload: Workload): number {
  return Math.max(...workload.messages.map((m) => m.at)) + workload.turnMs;
}

/**
 * The messages sent while a turn for an earlier message would still run (less than one turn after
 * it): the corrections and follow-ups steering is for. Taken from the script, not from a replay, so
 * every strategy is measured on the same messages.
 */
export function midTurnMessages(workload: Workload): number[] {
  const { messages, turnMs } = workload;
  return messages.flatMap((message, index) =>
    messages.slice(0, index).some((earlier) => message.at - earlier.at < turnMs) ? [index] : [],
  );
}
