import {
  DEFAULT_PERMISSION_POLICY,
  PERMISSION_POLICIES,
  type PermissionPolicy,
  TOOL_KINDS,
} from '@tributary/acp';
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
