import { DEFAULT_ROUTE } from '@tributary/config';
import { COMMAND_DESCRIPTIONS, THREAD_COMMANDS } from '@tributary/platforms';
import type { BatchRecord, ThreadState } from '@tributary/queue';

/** What a thread's status is read from: its state, its agent session, its latest ended batch. */
export interface StatusSources {
  state(thread: string): Promise<ThreadState>;
  session(thread: string): Promise<{ agent: string; sessionId: string } | undefined>;
  lastBatch(thread: string): Promise<BatchRecord | undefined>;
  /** The route the thread started with, when it has one recorded (docs/adr/0058). */
  route(thread: string): Promise<string | undefined>;
}

/** `/status`: running or idle, messages waiting, the agent and session, when the last turn ended. */
export async function describeThread(
  sources: StatusSources,
  thread: string,
  now = Date.now(),
): Promise<string> {
  const [state, session, last, route] = await Promise.all([
    sources.state(thread),
    sources.session(thread),
    sources.lastBatch(thread),
    sources.route(thread),
  ]);
  if (state.status === 'idle' && state.backlog === 0 && session === undefined && last === undefined) {
    return 'No conversation here yet: write to me to start one.';
  }
  const lines = [`**Status:** ${activity(state, now)}${state.paused ? ', paused by an operator' : ''}`];
  lines.push(
    session === undefined
      ? '**Agent:** no session yet; the next turn starts one'
      : `**Agent:** ${agentName(session.agent)}, session \`${session.sessionId}\``,
  );
  if (last !== undefined) lines.push(`**Last turn:** ${last.status}, ended ${ago(last.endedAt, now)}`);
  if (route !== undefined && route !== DEFAULT_ROUTE.route) lines.push(`**Route:** ${route}`);
  return lines.join('\n');
}

/** Programs that run another one named after them. */
const LAUNCHERS = new Set([
  'node',
  'nodejs',
  'npx',
  'bun',
  'bunx',
  'deno',
  'tsx',
  'pnpm',
  'yarn',
  'dlx',
  'uvx',
  'python',
  'python3',
  'env',
  'exec',
]);

/**
 * The agent as people know it, from the command line its session was opened with: the program's name
 * (`claude-agent-acp`, `gemini-cli`), never the worker's paths or options. The program is the first
 * word that is no launcher, option or URL; a bare word right after an option is taken for its value.
 */
export function agentName(command: string): string {
  const words = command.split(/\s+/).filter((word) => word !== '');
  const program = words.find((word, index) => {
    const base = word.split('/').at(-1) ?? word;
    if (word.startsWith('-') || /^[a-z]+:/i.test(word) || LAUNCHERS.has(base)) return false;
    return !(words[index - 1]?.startsWith('-') && !/[/@.]/.test(word));
  });
  if (program === undefined) return 'the configured agent';
  const parts = program.split('/').filter((part) => part !== '' && part !== '.' && part !== '..');
  const file = (parts.pop() ?? program).replace(/\.(m?js|ts)$/, '');
  if (!['main', 'index', 'cli'].includes(file)) return file;
  return parts.reverse().find((part) => !['src', 'dist', 'bin', 'lib'].includes(part)) ?? file;
}

function activity(state: ThreadState, now: number): string {
  const inbox = `${state.backlog} message${state.backlog === 1 ? '' : 's'}`;
  switch (state.status) {
    case 'running': {
      const since = state.claimedAt === null ? '' : ` since ${ago(state.claimedAt, now)}`;
      return `running a turn${since}; ${inbox} in the inbox, the running turn's included`;
    }
    case 'scheduled':
      return `waiting for a worker; ${inbox} waiting`;
    case 'idle':
      return state.backlog === 0 ? 'idle' : `idle; ${inbox} waiting`;
  }
}

function ago(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  return `at ${new Date(at).toISOString().replace(/\.\d+Z$/, 'Z')}`;
}

/** How people give commands on each platform, for `/help`. */
const HOW: Record<string, string> = {
  slack:
    'In a thread write `@bot /cancel`; anywhere in a channel, `/tributary cancel` acts on your latest conversation there.',
  telegram:
    'Send `/cancel` in the chat or topic (`/cancel@yourbot` in a group with several bots); `/cancel_all` is `/cancel-all`.',
  discord: "Use the bot's application commands (`/cancel`) or write `/cancel` in the thread.",
};

/** `/help`: every command, with how to give it on `platform`. */
export function commandHelp(platform: string): string {
  const list = THREAD_COMMANDS.map((command) => `• \`/${command}\`: ${COMMAND_DESCRIPTIONS[command]}`);
  const how = HOW[platform] ?? 'Send `/cancel` as a message of its own.';
  return ['**Commands**', ...list, '', how].join('\n');
}
