import type { ContentBlock } from '@agentclientprotocol/sdk';

/** What a test asks the agent to do in one turn (`@agent {json}` lines, over `TRIBUTARY_AGENT_DEFAULTS`). */
export interface AgentScript {
  /** Replaces the default batch summary. */
  reply?: string;
  /** The scripted `reply` is this many copies of itself: a very long reply from a short script. */
  replyRepeat?: number;
  /** A message chunk sent before any plan or tool call: text the tool calls then interrupt. */
  preamble?: string;
  /** Waits this long before replying; `session/cancel` interrupts the wait. */
  delayMs?: number;
  /** Number of agent_message_chunk updates the reply is split into. */
  chunks?: number;
  /** Waits this long between chunks (a reply that streams in); `session/cancel` interrupts it. */
  chunkDelayMs?: number;
  /** Number of tool_call + tool_call_update pairs emitted before the reply. */
  toolCalls?: number;
  /**
   * Reports usage as the published agents do: a usage_update after the reply (context used, the
   * session's cost so far) and the turn's tokens with its end.
   */
  usage?: boolean;
  /** Answers the prompt with a JSON-RPC error carrying this message. */
  error?: string;
  /** Never answers and ignores cancel. */
  hang?: boolean;
  /** Keeps going after `session/cancel` and ends with end_turn. */
  ignoreCancel?: boolean;
  /**
   * Written to stderr before `exit` or `error` take effect, with `${NAME}` replaced by the agent's
   * environment variable NAME: an agent that fails printing its credentials.
   */
  stderr?: string;
  /** Exits the process with this code mid-turn. */
  exit?: number;
  /** Sends session/request_permission (for an `execute` tool) and reports the outcome in the reply. */
  permission?: boolean;
  /** Sends one session/request_permission per tool kind listed, reporting each outcome in the reply. */
  permissions?: string[];
  /** The option kinds a permission request offers (default: all four, allow_once first). */
  permissionOptions?: string[];
  /** Emits one tool_call (in progress, then completed) per tool kind listed, before the reply. */
  toolKinds?: string[];
  /** Emits one tool_call (kind `other`, in progress, then completed) per title listed, after the kinds'. */
  toolTitles?: string[];
  /** Emits a plan with these entries (the first in progress, the rest pending) before any tool call. */
  plan?: string[];
  /**
   * Runs this shell command line (`/bin/sh -c`) in the session's working directory as an `execute`
   * tool call, as coding agents run their shell tools, and puts its exit status and output in the reply.
   */
  shell?: string;
  /** Reports the session's working directory in the reply. */
  reportCwd?: boolean;
  /** Reports the session's mode and the MCP servers it was opened with (as JSON) in the reply. */
  reportSession?: boolean;
  /** Reports these environment variables of the agent process in the reply. */
  env?: string[];
  /** Starts a long-lived child in the agent's process group, holding its stdout, and reports its pid. */
  spawnGrandchild?: boolean;
  /**
   * Starts a long-lived child in a session (and process group) of its own, as claude-agent-acp's shell
   * tool does, out of reach of a kill of the agent's group, that ignores SIGTERM, and reports its pid.
   */
  spawnDetached?: boolean;
  /** Ignores SIGTERM from now on, so only SIGKILL ends the process. */
  ignoreSigterm?: boolean;
  /** Sends one more agent_message_chunk with this text after the prompt was answered. */
  lateChunk?: string;
  /** Replies with the prompt exactly as received (its content blocks as JSON), for tests to inspect. */
  reportPrompt?: boolean;
}

export class ScriptError extends Error {
  override name = 'ScriptError';
}

type FieldKind = 'string' | 'count' | 'integer' | 'boolean' | 'string[]';

const FIELDS: Record<keyof AgentScript, FieldKind> = {
  reply: 'string',
  replyRepeat: 'count',
  preamble: 'string',
  delayMs: 'count',
  chunks: 'count',
  chunkDelayMs: 'count',
  toolCalls: 'count',
  usage: 'boolean',
  error: 'string',
  hang: 'boolean',
  ignoreCancel: 'boolean',
  stderr: 'string',
  exit: 'integer',
  permission: 'boolean',
  permissions: 'string[]',
  permissionOptions: 'string[]',
  toolKinds: 'string[]',
  toolTitles: 'string[]',
  plan: 'string[]',
  shell: 'string',
  reportCwd: 'boolean',
  reportSession: 'boolean',
  env: 'string[]',
  spawnGrandchild: 'boolean',
  spawnDetached: 'boolean',
  ignoreSigterm: 'boolean',
  lateChunk: 'string',
  reportPrompt: 'boolean',
};

function fits(kind: FieldKind, value: unknown): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isInteger(value);
    case 'count':
      return Number.isInteger(value) && (value as number) >= 0;
    case 'string[]':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
  }
}

function isField(key: string): key is keyof AgentScript {
  return Object.hasOwn(FIELDS, key);
}

/** Validates a script object; unknown fields are errors so a typo in a test fails loudly. */
function parseScript(value: unknown, origin: string): AgentScript {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ScriptError(`${origin}: a script must be a JSON object`);
  }
  for (const [key, field] of Object.entries(value)) {
    if (!isField(key)) {
      throw new ScriptError(`${origin}: unknown script field "${key}"`);
    }
    if (!fits(FIELDS[key], field)) {
      throw new ScriptError(`${origin}: "${key}" must be a ${FIELDS[key]}`);
    }
  }
  return value as AgentScript;
}

export function parseScriptJson(json: string, origin: string): AgentScript {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new ScriptError(`${origin}: invalid JSON (${(error as Error).message})`);
  }
  return parseScript(value, origin);
}

const SCRIPT_LINE = /^@agent\s+(\{.*\})\s*$/;

/** Merges every `@agent {json}` line of the prompt's text blocks, later lines overriding earlier ones. */
export function scriptFromPrompt(prompt: readonly ContentBlock[]): AgentScript {
  let script: AgentScript = {};
  for (const block of prompt) {
    if (block.type !== 'text') continue;
    for (const line of block.text.split('\n')) {
      const match = SCRIPT_LINE.exec(line.trim());
      if (match?.[1]) script = { ...script, ...parseScriptJson(match[1], '@agent line') };
    }
  }
  return script;
}

/** The text without its script lines, so echoes show what a person wrote. */
export function withoutScriptLines(text: string): string {
  return text
    .split('\n')
    .filter((line) => !SCRIPT_LINE.test(line.trim()))
    .join('\n')
    .trim();
}
