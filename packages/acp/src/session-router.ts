import type {
  RequestPermissionOutcome,
  RequestPermissionRequest,
  RequestPermissionResponse,
  ToolKind,
} from '@agentclientprotocol/sdk';
import type { LogSink } from '@tributary/observability';
import type { AgentProcess } from './agent-process.js';
import {
  choosePermission,
  DEFAULT_PERMISSION_POLICY,
  type PermissionPolicy,
  type PermissionRules,
  policyFor,
} from './permission-policy.js';
import type { PooledSession, SessionRegistry } from './session-registry.js';
import type { ActiveTurn } from './turn.js';
import type { TurnEvent } from './turn-events.js';

/** An update that arrived for a session with no turn running (e.g. after the turn was answered). */
export interface LateUpdate {
  threadKey: string;
  sessionId: string;
  event: TurnEvent;
}

export interface SessionRouterOptions {
  permissionPolicy?: PermissionPolicy;
  /** Policies for requests of these tool kinds, over `permissionPolicy`. */
  permissionRules?: Readonly<Partial<Record<ToolKind, PermissionPolicy>>>;
  /** A thread's own rules (its route's, docs/adr/0058), over the two above; undefined: theirs. */
  permissionsFor?: (threadKey: string) => PermissionRules | undefined;
  /** Receives late updates; without it they are dropped with a debug record. */
  onLateUpdate?: (update: LateUpdate) => void;
  /**
   * Puts a request the `ask` policy covers to the people of the thread and answers with theirs (or the
   * fallback after a time-out, or `cancelled` when the turn is); without it `ask` refuses.
   */
  ask?: PermissionAsker;
}

export type PermissionAsker = (
  request: RequestPermissionRequest,
  threadKey: string,
) => Promise<RequestPermissionOutcome>;

/** The session's turn while it still owns the session's updates (not yet answered). */
function runningTurn(session: PooledSession): ActiveTurn | undefined {
  return session.turn && !session.turn.answered ? session.turn : undefined;
}

/**
 * What an agent sends without being asked, taken to the turn it belongs to: its session's updates, and
 * its permission requests, answered by the configured policy or, under `ask`, by the people of the
 * thread. Agents are told apart by process, sessions by id, since one process may carry several
 * sessions.
 */
export class SessionRouter {
  constructor(
    private readonly sessions: SessionRegistry,
    private readonly options: SessionRouterOptions,
    private readonly logger: LogSink,
  ) {}

  route(sessionId: string, event: TurnEvent, agent: AgentProcess): void {
    const session = this.sessions.find(agent, sessionId);
    if (!session) {
      this.logger.debug({ sessionId, kind: event.kind }, 'update for a session no thread holds dropped');
      return;
    }
    const turn = runningTurn(session);
    if (turn) {
      turn.deliver(event);
      return;
    }
    const { threadKey } = session;
    if (!this.options.onLateUpdate) {
      this.logger.debug({ threadKey, sessionId, kind: event.kind }, 'late update dropped');
      return;
    }
    try {
      this.options.onLateUpdate({ threadKey, sessionId, event });
    } catch (error) {
      this.logger.warn({ threadKey, sessionId, err: error }, 'late update listener threw');
    }
  }

  async answerPermission(
    request: RequestPermissionRequest,
    agent: AgentProcess,
  ): Promise<RequestPermissionResponse> {
    const session = this.sessions.find(agent, request.sessionId);
    const turn = session && runningTurn(session);
    const { permissionPolicy, permissionRules, permissionsFor, ask } = this.options;
    const kind = request.toolCall.kind ?? 'other';
    const rules = (session && permissionsFor?.(session.threadKey)) ?? {
      policy: permissionPolicy ?? DEFAULT_PERMISSION_POLICY,
      byKind: permissionRules,
    };
    const policy = policyFor(rules, kind);
    // Outside a running turn nobody owns the decision, so the request is cancelled.
    let outcome: RequestPermissionOutcome = { outcome: 'cancelled' };
    if (turn && policy === 'ask' && ask && !turn.cancelling) {
      outcome = await ask(request, session.threadKey);
      // A turn cancelled while the people were asked answers `cancelled`, whatever they said (ACP).
      if (turn.cancelling) outcome = { outcome: 'cancelled' };
    } else if (turn) {
      outcome = choosePermission(policy, request.options, turn.cancelling);
    }
    // The tool's title is the agent's words (a command line may hold a secret it read); the log names
    // the call by id and kind, and the worker scrubs the title wherever it shows it.
    this.logger.info(
      {
        threadKey: session?.threadKey,
        sessionId: request.sessionId,
        policy,
        outcome,
        toolCallId: request.toolCall.toolCallId,
        toolKind: kind,
      },
      'permission request answered',
    );
    turn?.deliver({ kind: 'permission', request, outcome });
    return { outcome };
  }
}
