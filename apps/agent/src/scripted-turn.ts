import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  type ContentBlock,
  type McpServer,
  type PermissionOption,
  type PermissionOptionKind,
  RequestError,
  type SessionUpdate,
  type StopReason,
  type ToolKind,
} from '@agentclientprotocol/sdk';
import { summarizeBatch, summarizeSteers } from './batch-summary.js';
import { isBrokerBlock } from './broker-blocks.js';
import type { Log } from './log.js';
import type { AgentScript } from './script.js';
import { splitMessages } from './sender-context.js';
import type { TurnWire } from './turn-wire.js';

export interface TurnInput {
  sessionId: string;
  /** The working directory the session was opened in. */
  cwd: string;
  prompt: ContentBlock[];
  script: AgentScript;
  /** Whether `@agent` lines were read as a script, and so are left out of the echoed text. */
  scripting: boolean;
  /** Where the turn's updates and permission requests go, in the session's protocol version. */
  wire: TurnWire;
  /** Aborted by session/cancel (or session/close) for this session. */
  cancel: AbortSignal;
  earlierTurns: number;
  /** What the session's turns in this process have cost so far (USD), for the usage report. */
  costSoFar: number;
  /** The session's mode, when the agent offers modes. */
  modeId: string | undefined;
  /** The MCP servers the session was last opened with. */
  mcpServers: readonly McpServer[];
  /**
   * Ends steering for this turn and returns the prompts steered into it: called as the reply is
   * written, so a steer either makes it into the reply or is refused, never accepted and left out.
   */
  closeSteering: () => readonly ContentBlock[][];
  log: Log;
}

export interface TurnOutcome {
  stopReason: StopReason;
  /** The reply text actually streamed to the client. */
  text: string;
  /** With `usage` scripted: the tokens the turn reports at its end, and what it cost (USD). */
  usage?: ScriptedUsage;
}

export interface ScriptedUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cost: number;
}

/** What the scripted model charges per token (USD), so that cost reports add up to something checkable. */
export const PRICE_PER_INPUT_TOKEN = 3e-6;
export const PRICE_PER_OUTPUT_TOKEN = 15e-6;

/** A turn's usage as a model would count it: about four characters a token, prompt in and reply out. */
function usageOf(prompt: readonly ContentBlock[], reply: string): ScriptedUsage {
  const inputTokens = Math.ceil(JSON.stringify(prompt).length / 4);
  const outputTokens = Math.ceil(reply.length / 4);
  const cost = inputTokens * PRICE_PER_INPUT_TOKEN + outputTokens * PRICE_PER_OUTPUT_TOKEN;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, cost };
}

const text = (value: string): ContentBlock => ({ type: 'text', text: value });

/** Resolves after `ms`, or as soon as `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    if (signal?.aborted) done();
    else signal?.addEventListener('abort', done, { once: true });
  });
}

function splitInto(reply: string, count: number): string[] {
  const size = Math.ceil(reply.length / count);
  return Array.from({ length: count }, (_, index) => reply.slice(index * size, (index + 1) * size));
}

let ignoringSigterm = false;

/** From now on only SIGKILL ends the process; the listener is installed once, however many turns ask. */
function ignoreSigterm(log: Log): void {
  if (ignoringSigterm) return;
  ignoringSigterm = true;
  process.on('SIGTERM', () => log('warn', 'ignoring SIGTERM as scripted'));
}

/**
 * A child that never ends on its own, only when its process group is killed. It holds the agent's stdout
 * open (writing nothing), as a tool that inherits stdio would, so the protocol stream outlives the agent.
 */
function spawnGrandchild(): number | undefined {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], {
    stdio: ['ignore', 'inherit', 'ignore'],
  });
  return child.pid;
}

/**
 * A child that leaves the agent's session and process group (setsid), holding nothing of the agent's,
 * and shrugs off SIGTERM as a tool busy with its own work may: only SIGKILL ends it. Its pid is
 * reported once it ignores SIGTERM, so a stop that follows cannot catch it still starting up.
 */
async function spawnDetached(): Promise<number | undefined> {
  const forever =
    "process.on('SIGTERM', () => {}); process.stdout.write('ready'); setInterval(() => {}, 1 << 30)";
  const child = spawn(process.execPath, ['-e', forever], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await once(child.stdout, 'data');
  child.stdout.destroy();
  child.unref();
  return child.pid;
}

/** A shell tool's output beyond this many bytes is cut: a reply is not a log file. */
const SHELL_OUTPUT_BYTES = 64 * 1024;

/** Runs a command line as coding agents' shell tools do, stdout and stderr together, until it exits. */
async function runShell(
  command: string,
  cwd: string,
  signal: AbortSignal,
): Promise<{ status: string; output: string }> {
  const child = spawn('/bin/sh', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'], signal });
  const chunks: Buffer[] = [];
  let size = 0;
  const keep = (chunk: Buffer): void => {
    if (size < SHELL_OUTPUT_BYTES) chunks.push(chunk);
    size += chunk.length;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const [code, signalName] = (await once(child, 'close').catch(() => [null, 'SIGTERM'])) as [
    number | null,
    string | null,
  ];
  const output = Buffer.concat(chunks).subarray(0, SHELL_OUTPUT_BYTES).toString('utf8');
  return { status: code === null ? `killed by ${signalName}` : `exit ${code}`, output };
}

const OPTION_KINDS: readonly PermissionOptionKind[] = [
  'allow_once',
  'allow_always',
  'reject_once',
  'reject_always',
];

/** Asks for a tool of this kind, offering the option kinds listed (each with its kind, dashed, as id). */
async function askPermission(
  input: TurnInput,
  toolCallId: string,
  kind: string,
  offered: readonly string[] = OPTION_KINDS,
): Promise<string> {
  const response = await input.wire.requestPermission({
    sessionId: input.sessionId,
    toolCall: { toolCallId, title: `Scripted ${kind} tool`, kind: kind as ToolKind, status: 'pending' },
    options: offered.map(
      (option): PermissionOption => ({
        optionId: option.replace('_', '-'),
        name: option,
        kind: option as PermissionOptionKind,
      }),
    ),
  });
  const { outcome } = response;
  return outcome.outcome === 'selected' ? `selected ${outcome.optionId}` : 'cancelled';
}

/**
 * Sends one more chunk shortly after the prompt's answer. Call it right before answering: the answer is
 * queued in microtasks, the chunk only on a timer, so it always follows the answer on the wire.
 */
export function sendLateChunk(input: Pick<TurnInput, 'wire' | 'sessionId' | 'log'>, late: string): void {
  setTimeout(() => {
    input.wire
      .update(input.sessionId, { sessionUpdate: 'agent_message_chunk', content: text(late) })
      .catch((error: unknown) => input.log('warn', 'late chunk not sent', { error: String(error) }));
  }, 10);
}

/** Plays one prompt turn as the script says; the order of steps is what the tests rely on. */
export async function playTurn(input: TurnInput): Promise<TurnOutcome> {
  const { script, cancel, log } = input;
  const send = (update: SessionUpdate): Promise<void> => input.wire.update(input.sessionId, update);
  const stopped = (): boolean => cancel.aborted && script.ignoreCancel !== true;
  const turnNumber = input.earlierTurns + 1;
  const messages = splitMessages(input.prompt.filter((block) => !isBrokerBlock(block)));
  const restored = input.prompt.filter(isBrokerBlock).length;

  await send({
    sessionUpdate: 'agent_thought_chunk',
    content: text(`Reading ${messages.length} message(s).`),
  });
  if (script.ignoreSigterm) ignoreSigterm(log);
  if (script.spawnGrandchild) {
    await send({
      sessionUpdate: 'agent_thought_chunk',
      content: text(`grandchild pid ${spawnGrandchild()}`),
    });
  }
  if (script.spawnDetached) {
    await send({
      sessionUpdate: 'agent_thought_chunk',
      content: text(`detached child pid ${await spawnDetached()}`),
    });
  }
  if (script.hang) {
    log('info', 'hanging as scripted', { sessionId: input.sessionId });
    await new Promise<never>(() => {});
  }
  if (script.delayMs) await pause(script.delayMs, script.ignoreCancel ? undefined : cancel);
  if (stopped()) return { stopReason: 'cancelled', text: '' };

  if (script.preamble !== undefined) {
    await send({ sessionUpdate: 'agent_message_chunk', content: text(script.preamble) });
  }
  const notes: string[] = [];
  const { permissionOptions } = script;
  if (script.permission) {
    const outcome = await askPermission(input, `permission-${turnNumber}`, 'execute', permissionOptions);
    notes.push(`permission: ${outcome}`);
  }
  for (const kind of script.permissions ?? []) {
    const outcome = await askPermission(input, `permission-${turnNumber}-${kind}`, kind, permissionOptions);
    notes.push(`permission ${kind}: ${outcome}`);
  }
  if (script.plan) {
    await send({
      sessionUpdate: 'plan',
      entries: script.plan.map((content, index) => ({
        content,
        priority: 'medium',
        status: index === 0 ? 'in_progress' : 'pending',
      })),
    });
  }
  const tools = [
    ...Array.from({ length: script.toolCalls ?? 0 }, (_, index) => ({
      title: `Scripted tool ${index + 1}`,
      kind: 'other',
    })),
    ...(script.toolKinds ?? []).map((kind) => ({ title: `Scripted ${kind} tool`, kind })),
    ...(script.toolTitles ?? []).map((title) => ({ title, kind: 'other' })),
  ];
  for (const [offset, tool] of tools.entries()) {
    if (stopped()) break;
    const index = offset + 1;
    const toolCallId = `tool-${turnNumber}-${index}`;
    await send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: tool.title,
      kind: tool.kind as ToolKind,
      status: 'in_progress',
    });
    await send({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: 'completed',
      content: [{ type: 'content', content: text(`tool ${index} done`) }],
    });
  }
  if (script.shell !== undefined && !stopped()) {
    const toolCallId = `shell-${turnNumber}`;
    await send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: script.shell,
      kind: 'execute',
      status: 'in_progress',
    });
    const { status, output } = await runShell(script.shell, input.cwd, cancel);
    await send({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: status === 'exit 0' ? 'completed' : 'failed',
      content: [{ type: 'content', content: text(output) }],
    });
    notes.push(`shell ${status}`, output);
  }
  if (stopped()) return { stopReason: 'cancelled', text: '' };
  if (script.stderr !== undefined) {
    process.stderr.write(
      `${script.stderr.replace(/\$\{(\w+)\}/g, (_, name: string) => process.env[name] ?? '')}\n`,
    );
  }
  if (script.exit !== undefined) {
    await send({ sessionUpdate: 'agent_message_chunk', content: text(`exiting with code ${script.exit}`) });
    log('info', 'exiting as scripted', { code: script.exit });
    process.exit(script.exit);
  }
  if (script.error !== undefined) throw new RequestError(-32603, script.error);
  if (script.reportCwd) notes.push(`cwd ${input.cwd}`);
  if (script.reportSession) {
    notes.push(`mode ${input.modeId ?? '(none)'}`, `mcpServers ${JSON.stringify(input.mcpServers)}`);
  }
  for (const name of script.env ?? []) {
    const value = process.env[name];
    notes.push(value === undefined ? `env ${name} is unset` : `env ${name}=${value}`);
  }

  const steers = input.closeSteering();
  const reply = [
    script.reply?.repeat(script.replyRepeat ?? 1) ??
      (script.reportPrompt
        ? JSON.stringify(input.prompt)
        : summarizeBatch(messages, input.earlierTurns, restored, input.scripting)),
    ...(steers.length > 0 ? [summarizeSteers(splitMessages(steers.flat()), input.scripting)] : []),
    ...notes,
  ].join('\n');
  let sent = '';
  for (const [index, piece] of splitInto(reply, Math.max(1, script.chunks ?? 1)).entries()) {
    if (index > 0 && script.chunkDelayMs)
      await pause(script.chunkDelayMs, script.ignoreCancel ? undefined : cancel);
    if (stopped()) return { stopReason: 'cancelled', text: sent };
    await send({ sessionUpdate: 'agent_message_chunk', content: text(piece) });
    sent += piece;
  }
  const stopReason = stopped() ? 'cancelled' : 'end_turn';
  if (!script.usage) return { stopReason, text: sent };
  // As the published agents report it: the context and the session's cost so far as an update, the
  // turn's tokens with its end.
  const usage = usageOf(input.prompt, sent);
  await send({
    sessionUpdate: 'usage_update',
    used: usage.totalTokens,
    size: 200_000,
    cost: { amount: input.costSoFar + usage.cost, currency: 'USD' },
  });
  // ACP: once session/cancel arrived, the answer is `cancelled` even if the reply got out in full.
  return { stopReason, text: sent, usage };
}
