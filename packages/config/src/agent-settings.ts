import type { McpServer } from '@tributary/acp';
import {
  DEFAULT_PERMISSION_POLICY,
  PERMISSION_POLICIES,
  type PermissionPolicy,
  TOOL_KINDS,
} from '@tributary/acp/permission-policy';
import { ConfigError } from './config-error.js';
import { hasPlaceholder, readCwdTemplate } from './cwd-template.js';
import { type Env, readChoice, readOptional, readString } from './env-readers.js';

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

/** What happens to a conversation's working directory when its thread is reset. */
export type CwdRetention = 'keep' | 'delete-on-reset';

export interface WorkingDirectorySettings {
  /** Absolute; may hold `{platform}`, `{channel}` and `{thread}`, each one safe path segment of the thread key. */
  agentCwd: string;
  agentCwdRetention: CwdRetention;
}

export function readWorkingDirectorySettings(env: Env, cwd: string): WorkingDirectorySettings {
  const agentCwd = readCwdTemplate('AGENT_CWD', readString(env, 'AGENT_CWD', cwd), cwd);
  const agentCwdRetention = readChoice<CwdRetention>(
    env,
    'AGENT_CWD_RETENTION',
    ['keep', 'delete-on-reset'],
    'keep',
  );
  // A directory without {thread} is shared by several threads: one thread's reset must not delete it.
  if (agentCwdRetention === 'delete-on-reset' && !hasPlaceholder(agentCwd, 'thread')) {
    throw new ConfigError('AGENT_CWD_RETENTION', 'delete-on-reset needs {thread} in AGENT_CWD');
  }
  return { agentCwd, agentCwdRetention };
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
  const servers = value.map((item, index) => readMcpServer(name, item, index));
  const names = new Set<string>();
  for (const server of servers) {
    if (names.has(server.name)) throw new ConfigError(name, `server name "${server.name}" is given twice`);
    names.add(server.name);
  }
  return Object.freeze(servers);
}

function readMcpServer(variable: string, item: unknown, index: number): McpServer {
  const at = `server ${index}`;
  const fail = (message: string): never => {
    throw new ConfigError(variable, `${at}: ${message}`);
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
