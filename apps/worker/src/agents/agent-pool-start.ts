import { mkdir } from 'node:fs/promises';
import {
  type AgentCommandConfig,
  type McpServer,
  type NodeEntryCommand,
  type PermissionAsker,
  type PermissionRules,
  SessionPool,
  type StartFailures,
} from '@tributary/acp';
import type { WorkerConfig } from '@tributary/config';
import type { Metrics, SecretScrubber } from '@tributary/observability';
import type { Logger } from 'pino';
import { RoomBudget } from '../rooms/room-budget.js';
import { ThreadRooms } from '../rooms/thread-rooms.js';
import type { AgentWarden } from '../warden/agent-warden.js';
import type { AgentIsolation } from './agent-isolation.js';
import { agentCommandConfig } from './agent-setup.js';
import { knownSecrets } from './known-secrets.js';

export interface WorkerAgents {
  readonly agent: AgentCommandConfig & { args: readonly string[] };
  /** The worker's secrets, blanked from whatever an agent's output carries out. */
  readonly secrets: SecretScrubber;
  readonly rooms: ThreadRooms;
  readonly budget: RoomBudget;
  readonly pool: SessionPool;
}

/** Whoever follows whether the agent starts (AgentStartHealth, once the runner it pauses exists). */
export interface StartReports {
  started(): void;
  failed(failures: StartFailures): void;
}

/**
 * The worker's agents: the command that starts one, each thread's room and its disk budget, and the
 * session pool that starts them in `isolation`, under the warden's watch where they run on this machine.
 */
export async function startAgentPool(
  config: Readonly<WorkerConfig>,
  options: { builtInAgent: NodeEntryCommand; agentEnv?: Record<string, string>; logger: Logger },
  { sandbox, launcher }: AgentIsolation,
  warden: AgentWarden,
  metrics: Metrics,
  starts: StartReports,
  answers: {
    ask: PermissionAsker;
    /** A thread's own permission rules, from its route (docs/adr/0058). */
    permissionsFor: (thread: string) => PermissionRules;
    /** A thread's own session mode, from its route, where it sets one. */
    sessionModeOf: (thread: string) => string | undefined;
    /** A thread's own MCP servers, from its route, where it sets them. */
    mcpServersOf: (thread: string) => readonly McpServer[] | undefined;
  },
): Promise<WorkerAgents> {
  const { logger } = options;
  const agent = agentCommandConfig(config, options.builtInAgent, options.agentEnv);
  const rooms = new ThreadRooms(
    config.agentWorkspaces,
    config.agentWorkspaceOnReset,
    logger.child({ component: 'workspaces' }),
    () => metrics.workspaceFilesStuckTotal.inc(),
  );
  await mkdir(rooms.root, { recursive: true });
  const budget = new RoomBudget({
    rooms,
    budgetBytes: config.agentWorkspaceBudgetBytes,
    onReset: config.agentWorkspaceOnReset,
    onOver: () => metrics.workspaceOverBudgetTurnsTotal.inc(),
  });
  const pool = new SessionPool({
    agent,
    cwd: rooms.root,
    rooms,
    sandbox,
    launcher,
    maxSessions: config.maxSessions,
    warmSpares: config.warmSpares,
    spareMemoryBytes: config.warmSparesMemoryMb * 1024 * 1024,
    onSpareMissed: () => metrics.agentSpareMissesTotal.inc(),
    startConcurrency: config.agentStartConcurrency,
    onAgentStartWaited: (ms) => {
      metrics.agentStartWaitSeconds.observe(ms / 1000);
      logger.debug({ waitedMs: Math.round(ms) }, 'agent start began');
    },
    initializeTimeoutMs: config.agentInitTimeoutMs,
    cancelTimeoutMs: config.cancelTimeoutMs,
    permissionPolicy: config.permissionPolicy,
    permissionRules: config.permissionRules,
    ...answers,
    ...(config.agentSessionMode === undefined ? {} : { sessionMode: config.agentSessionMode }),
    // An agent host's pids are not this machine's: the host, under the warden's lease, ends those.
    ...(sandbox.kind === 'agent-host' ? {} : { watcher: warden }),
    logger: logger.child({ component: 'acp' }),
    onAgentRestart: () => metrics.agentRestartsTotal.inc(),
    onAgentStarted: () => {
      metrics.agentProcessStartsTotal.inc();
      starts.started();
    },
    onAgentStartFailed: (failures) => {
      metrics.agentStartFailuresTotal.inc();
      logger.warn(
        { consecutive: failures.consecutive, err: failures.lastError, agent: agent.command },
        'agent did not start',
      );
      starts.failed(failures);
    },
  });
  return { agent, secrets: knownSecrets(config, agent), rooms, budget, pool };
}
