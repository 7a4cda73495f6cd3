import { isAbsolute, join, resolve } from 'node:path';
import type { McpServer } from '@tributary/acp';
import {
  DEFAULT_PERMISSION_POLICY,
  PERMISSION_POLICIES,
  type PermissionPolicy,
  TOOL_KINDS,
} from '@tributary/acp/permission-policy';
import { ConfigError } from './config-error.js';
import { type Env, readChoice, readInteger, readOptional, readString } from './env-readers.js';

type ToolKind = (typeof TOOL_KINDS)[number];

/** How the worker answers the agent's permission requests (docs/adr/0018). */
export interface PermissionSettings {
  permissionPolicy: PermissionPolicy;
  /** Policies by tool kind, over `permissionPolicy`. */
  permissionRules: Readonly<Partial<Record<ToolKind, PermissionPolicy>>>;
}

export function readPermissionSettings(env: Env): PermissionSettings {
  return {
    permissionPolicy: readChoice(
      env,
      'AGENT_PERMISSION_POLICY',
      PERMISSION_POLICIES,
      DEFAULT_PERMISSION_POLICY,
    ),
    permissionRules: readPermissionRules(env),
  };
}

/** `AGENT_PERMISSION_RULES`: comma-separated `kind=policy` pairs, e.g. `read=allow,fetch=reject`. */
function readPermissionRules(env: Env): Readonly<Partial<Record<ToolKind, PermissionPolicy>>> {
  const name = 'AGENT_PERMISSION_RULES';
  const rules: Partial<Record<ToolKind, PermissionPolicy>> = {};
  for (const pair of (readOptional(env, name) ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const match = /^\s*([a-z_]+)\s*=\s*([a-z-]+)\s*$/.exec(pair);
    if (!match) throw new ConfigError(name, `expected kind=policy pairs, got ${JSON.stringify(pair)}`);
    const [, kind, policy] = match as unknown as [string, ToolKind, PermissionPolicy];
    if (!TOOL_KINDS.includes(kind)) {
      throw new ConfigError(
        name,
        `tool kind must be one of ${TOOL_KINDS.join(', ')}, got ${JSON.stringify(kind)}`,
      );
    }
    if (!PERMISSION_POLICIES.includes(policy)) {
      throw new ConfigError(
        name,
        `policy of ${kind} must be one of ${PERMISSION_POLICIES.join(', ')}, got ${JSON.stringify(policy)}`,
      );
    }
    if (Object.hasOwn(rules, kind)) throw new ConfigError(name, `${kind} is given twice`);
    rules[kind] = policy;
  }
  return Object.freeze(rules);
}

/** What a thread's reset does to its workspace and agent home: keeps them, or deletes them. */
export type WorkspaceOnReset = 'keep' | 'delete';

/** How agent processes are isolated (docs/adr/0044, 0045). */
export type AgentSandboxSetting = 'bubblewrap' | 'agent-host' | 'off';

export interface WorkspaceSettings {
  /** Absolute: each thread's workspace and agent home live under `{platform}/{channel}/{thread}` here. */
  agentWorkspaces: string;
  agentWorkspaceOnReset: WorkspaceOnReset;
  agentSandbox: AgentSandboxSetting;
  /** Absolute host paths a sandboxed agent may read, besides the system and the broker's code. */
  agentSandboxRead: readonly string[];
  /** The agent host's socket, with `agent-host`: agents run in its container, not the worker's. */
  agentHostSocket: string;
}

/** Where the worker and the agent host meet: a shared emptyDir in the Kubernetes base and compose. */
export const DEFAULT_AGENT_HOST_SOCKET = '/run/tributary/agent-host.sock';

/** Settings an upgrade must not silently ignore: what replaced them. */
const REPLACED: Readonly<Record<string, string>> = {
  AGENT_CWD: 'each thread has its own workspace under AGENT_WORKSPACES',
  AGENT_CWD_RETENTION: 'set AGENT_WORKSPACE_ON_RESET=delete',
};

export function readWorkspaceSettings(env: Env, cwd: string): WorkspaceSettings {
  for (const [name, instead] of Object.entries(REPLACED)) {
    if (readOptional(env, name) !== undefined) throw new ConfigError(name, `no longer read: ${instead}`);
  }
  const root = readString(env, 'AGENT_WORKSPACES', join('.tributary', 'workspaces'));
  const agentSandboxRead = (readOptional(env, 'AGENT_SANDBOX_READ') ?? '')
    .split(',')
    .map((path) => path.trim())
    .filter((path) => path !== '');
  for (const path of agentSandboxRead) {
    if (!isAbsolute(path)) {
      throw new ConfigError('AGENT_SANDBOX_READ', `${JSON.stringify(path)} is not an absolute path`);
    }
  }
  return {
    agentWorkspaces: resolve(cwd, root),
    agentWorkspaceOnReset: readChoice<WorkspaceOnReset>(
      env,
      'AGENT_WORKSPACE_ON_RESET',
      ['keep', 'delete'],
      'keep',
    ),
    agentSandbox: readChoice<AgentSandboxSetting>(
      env,
      'AGENT_SANDBOX',
      ['bubblewrap', 'agent-host', 'off'],
      'bubblewrap',
    ),
    agentSandboxRead: Object.freeze(agentSandboxRead),
    agentHostSocket: resolve(cwd, readString(env, 'AGENT_HOST_SOCKET', DEFAULT_AGENT_HOST_SOCKET)),
  };
}

/** The default per-thread disk budget: room for a checkout, its dependencies and build outputs. */
export const DEFAULT_WORKSPACE_BUDGET_MB = 10_240;

/**
 * AGENT_WORKSPACE_BUDGET_MB: how much a thread's workspace and agent home may take together, in bytes
 * (0: no budget). Read apart from the workspace settings: only workers measure rooms.
 */
export function readWorkspaceBudget(env: Env): { agentWorkspaceBudgetBytes: number } {
  const mb = readInteger(env, 'AGENT_WORKSPACE_BUDGET_MB', DEFAULT_WORKSPACE_BUDGET_MB, 0, 16 * 1024 * 1024);
  return { agentWorkspaceBudgetBytes: mb * 1024 * 1024 };
}

/** Where a turn's tool calls and plan are shown: a reaction, a status line in the streamed reply, both, neither. */
export type ProgressDisplay = 'all' | 'reactions' | 'status' | 'off';

export function readProgressDisplay(env: Env): ProgressDisplay {
  return readChoice<ProgressDisplay>(env, 'AGENT_PROGRESS', ['all', 'reactions', 'status', 'off'], 'all');
}

/** How each agent session is set up once opened (ACP `session/new`, `session/load`, `session/resume`). */
export interface SessionSetupSettings {
  /** Handed to the agent with every session it opens. */
  agentMcpServers: readonly McpServer[];
  /** A session mode put in place with `session/set_mode` where the agent offers it; undefined: none. */
  agentSessionMode: string | undefined;
}

export function readSessionSetupSettings(env: Env): SessionSetupSettings {
  return {
    agentMcpServers: readMcpServers(env),
    agentSessionMode: readOptional(env, 'AGENT_SESSION_MODE')?.trim() || undefined,
  };
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `AGENT_MCP_SERVERS`: a JSON array of ACP `McpServer` objects: `{name, command, args, env}` (stdio;
 * `env` a list of `{name, value}`) or `{type: "http" | "sse", name, url, headers}` (`headers` a list of
 * `{name, value}`). `args`, `env` and `headers` may be left out (empty).
 */
function readMcpServers(env: Env): readonly McpServer[] {
  const name = 'AGENT_MCP_SERVERS';
  const raw = readOptional(env, name);
  if (raw === undefined) return Object.freeze([]);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(name, `must be a JSON array of MCP servers (${(error as Error).message})`);
  }
  if (!Array.isArray(value)) throw new ConfigError(name, 'must be a JSON array of MCP servers');
  try {
    return parseMcpServers(value);
  } catch (error) {
    if (error instanceof McpServersError) throw new ConfigError(name, error.message);
    throw error;
  }
}

/** A list of MCP servers that is not one; the message names the server and the field. */
export class McpServersError extends Error {
  override name = 'McpServersError';
}

/**
 * ACP `McpServer`s from a parsed list (AGENT_MCP_SERVERS's JSON, a route profile's YAML), checked as
 * the agent would need them; throws McpServersError naming the first problem.
 */
export function parseMcpServers(value: unknown): readonly McpServer[] {
  if (!Array.isArray(value)) throw new McpServersError('must be a list of MCP servers');
  const servers = value.map((item, index) => readMcpServer(item, index));
  const names = new Set<string>();
  for (const server of servers) {
    if (names.has(server.name)) throw new McpServersError(`server name "${server.name}" is given twice`);
    names.add(server.name);
  }
  return Object.freeze(servers);
}

function readMcpServer(item: unknown, index: number): McpServer {
  const at = `server ${index}`;
  const fail = (message: string): never => {
    throw new McpServersError(`${at}: ${message}`);
  };
  if (!isObject(item)) return fail('must be an object');
  const { type = 'stdio' } = item;
  const known =
    type === 'stdio' ? ['type', 'name', 'command', 'args', 'env'] : ['type', 'name', 'url', 'headers'];
  if (type !== 'stdio' && type !== 'http' && type !== 'sse') {
    return fail(`"type" must be "stdio" (or left out), "http" or "sse", got ${JSON.stringify(type)}`);
  }
  for (const key of Object.keys(item)) {
    if (!known.includes(key)) fail(`unknown field "${key}" for a ${type} server`);
  }
  const text = (key: string): string => {
    const field = item[key];
    if (typeof field !== 'string' || field.trim() === '') fail(`"${key}" must be a non-empty string`);
    return field as string;
  };
  const pairs = (key: string): { name: string; value: string }[] => {
    const field = item[key] ?? [];
    if (
      !Array.isArray(field) ||
      !field.every(
        (pair) =>
          isObject(pair) &&
          Object.keys(pair).every((k) => k === 'name' || k === 'value') &&
          typeof pair.name === 'string' &&
          pair.name !== '' &&
          typeof pair.value === 'string',
      )
    ) {
      fail(`"${key}" must be a list of {"name": ..., "value": ...} with string values`);
    }
    return (field as { name: string; value: string }[]).map(({ name, value }) => ({ name, value }));
  };
  const serverName = text('name');
  if (type === 'stdio') {
    const args = item.args ?? [];
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) {
      fail('"args" must be a list of strings');
    }
    return { name: serverName, command: text('command'), args: args as string[], env: pairs('env') };
  }
  const url = text('url');
  if (!URL.canParse(url) || !['http:', 'https:'].includes(new URL(url).protocol)) {
    fail(`"url" must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  return { type, name: serverName, url, headers: pairs('headers') };
}
