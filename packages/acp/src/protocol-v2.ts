import type {
  ContentBlock,
  RequestPermissionRequest,
  StopReason,
  ToolCall,
  ToolCallUpdate,
} from '@agentclientprotocol/sdk';
import {
  type ContentBlock as ContentBlockV2,
  type ContentChunk,
  client,
  type Error as ErrorV2,
  type McpServer as McpServerV2,
  methods,
  type PlanUpdate,
  RequestError,
  type RequestPermissionRequest as RequestPermissionRequestV2,
  type SessionUpdate as SessionUpdateV2,
  type StateUpdate,
  type Stream,
  type ToolCallUpdate as ToolCallUpdateV2,
  type UsageUpdate,
} from '@agentclientprotocol/sdk/experimental/v2/unstable';
import { fromV2Initialize } from './agent-info.js';
import type { AgentProtocol, AgentTraffic } from './protocol.js';
import { sendSteer } from './steering.js';
import type { TurnEvent } from './turn-events.js';
import { type PromptEnd, promptEnd } from './turn-usage.js';

/** A turn in progress on a session: from its prompt to the idle state that ends it. */
interface RunningTurn {
  /** The agent reported foreground work (or echoed the prompt) since the prompt was sent. */
  started: boolean;
  onEnded: (() => void)[];
  end(ending: PromptEnd): void;
  fail(error: unknown): void;
  ended: Promise<PromptEnd>;
}

const V1_STOP_REASONS: ReadonlySet<string> = new Set([
  'end_turn',
  'max_tokens',
  'max_turn_requests',
  'refusal',
  'cancelled',
]);
const FINAL_TOOL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

function runningTurn(): RunningTurn {
  let end!: (ending: PromptEnd) => void;
  let fail!: (error: unknown) => void;
  const ended = new Promise<PromptEnd>((resolve, reject) => {
    end = resolve;
    fail = reject;
  });
  // Nobody awaits a turn whose prompt was refused; its end must not surface as unhandled.
  ended.catch(() => undefined);
  return { started: false, onEnded: [], end, fail, ended };
}

/** The broker's MCP servers are written in v1 terms, where a stdio server has no `type`. */
const toV2McpServer = (server: object): McpServerV2 =>
  ('type' in server ? server : { type: 'stdio', ...server }) as McpServerV2;

/**
 * ACP v2: a prompt's answer only says it was accepted; the turn ends at the `state_update` that
 * reports the session idle again. Load gives way to resume with a replay from the start.
 */
export function speakV2(stream: Stream, traffic: AgentTraffic): AgentProtocol {
  const turns = new Map<string, RunningTurn>();
  // Tool calls are upserts in v2; the first sighting of an id is the v1 `tool_call`. Kept per session
  // until the call ends, for the kind a later permission request refers to.
  const toolKinds = new Map<string, ToolCall['kind']>();

  function toolEvent(sessionId: string, update: ToolCallUpdateV2): TurnEvent {
    const key = `${sessionId}\n${update.toolCallId}`;
    const known = toolKinds.has(key);
    // v2 widens kinds and statuses; the values both versions share read the same.
    const kind = (update.kind ?? undefined) as ToolCall['kind'] | undefined;
    if (kind !== undefined || !known) toolKinds.set(key, kind ?? 'other');
    if (update.status && FINAL_TOOL_STATUSES.has(update.status)) toolKinds.delete(key);
    const status = (update.status ?? undefined) as ToolCall['status'];
    const { toolCallId, rawInput, rawOutput } = update;
    if (known) {
      const toolCallUpdate: ToolCallUpdate = {
        toolCallId,
        title: update.title,
        kind,
        status,
        rawInput,
        rawOutput,
      };
      return { kind: 'tool_call_update', toolCallUpdate };
    }
    const toolCall: ToolCall = { toolCallId, title: update.title ?? '', kind, status, rawInput, rawOutput };
    return { kind: 'tool_call', toolCall };
  }

  function toEvent(sessionId: string, update: SessionUpdateV2): TurnEvent {
    // The schema's open unions (future variants) defeat narrowing on the tag; each case reads its own.
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk':
        return { kind: update.sessionUpdate, content: (update as ContentChunk).content as ContentBlock };
      case 'tool_call_update':
        return toolEvent(sessionId, update as ToolCallUpdateV2);
      case 'plan_update': {
        const { plan } = update as PlanUpdate;
        if (plan.type === 'items' && 'entries' in plan) {
          return { kind: 'plan', entries: plan.entries as Extract<TurnEvent, { kind: 'plan' }>['entries'] };
        }
        break;
      }
      case 'usage_update': {
        const usage = update as UsageUpdate;
        return { kind: 'usage', used: usage.used, size: usage.size, cost: usage.cost ?? undefined };
      }
    }
    return { kind: 'other', update };
  }

  function onState(sessionId: string, state: StateUpdate): void {
    const turn = turns.get(sessionId);
    if (!turn) return;
    if (state.state === 'running' || state.state === 'requires_action') {
      turn.started = true;
      return;
    }
    // An idle snapshot before the turn started is the state the prompt found, not its end.
    if (state.state !== 'idle' || !turn.started) return;
    turns.delete(sessionId);
    for (const onEnded of turn.onEnded) onEnded();
    const stopReason = 'stopReason' in state ? state.stopReason : undefined;
    if (stopReason === 'error') {
      const reported = 'error' in state ? (state.error as ErrorV2 | null | undefined) : undefined;
      const error = reported ?? { code: -32603, message: 'the agent reported the turn failed' };
      turn.fail(new RequestError(error.code, error.message));
    } else {
      // An agent that ended the turn without saying why, or with a reason v1 has no word for, ended it.
      const known =
        typeof stopReason === 'string' && V1_STOP_REASONS.has(stopReason)
          ? (stopReason as StopReason)
          : 'end_turn';
      turn.end(promptEnd(known, 'usage' in state ? state.usage : undefined));
    }
  }

  function onUpdate(sessionId: string, update: SessionUpdateV2): void {
    if (update.sessionUpdate === 'state_update') {
      onState(sessionId, update as StateUpdate);
      return;
    }
    if (update.sessionUpdate === 'user_message' || update.sessionUpdate === 'user_message_chunk') {
      // The echo of a prompt: its turn is under way. The text is ours, not the agent's reply.
      const turn = turns.get(sessionId);
      if (turn) turn.started = true;
      return;
    }
    traffic.onUpdate(sessionId, toEvent(sessionId, update));
  }

  /** v2 names the tool call as a subject of the request; the rest reads the v1 request. */
  function toV1Permission(request: RequestPermissionRequestV2): RequestPermissionRequest {
    const { subject } = request;
    const toolCallId =
      subject?.type === 'tool_call' && 'toolCall' in subject
        ? (subject.toolCall as ToolCallUpdateV2).toolCallId
        : subject?.type === 'command' && 'toolCallId' in subject
          ? ((subject.toolCallId as string | null | undefined) ?? '')
          : '';
    const kind =
      subject?.type === 'command'
        ? 'execute'
        : (toolKinds.get(`${request.sessionId}\n${toolCallId}`) ?? 'other');
    return {
      sessionId: request.sessionId,
      toolCall: { toolCallId, title: request.title, kind },
      options: request.options as RequestPermissionRequest['options'],
    };
  }

  const app = client({ name: 'tributary' })
    .onNotification(methods.client.session.update, ({ params }) => onUpdate(params.sessionId, params.update))
    .onRequest(methods.client.session.requestPermission, ({ params }) =>
      traffic.onPermissionRequest(toV1Permission(params)),
    );
  const connection = app.connect(stream);
  const agent = connection.agent;
  const reopen = (sessionId: string, cwd: string, mcpServers: readonly object[], replay: boolean) =>
    agent.request(methods.agent.session.resume, {
      sessionId,
      cwd,
      mcpServers: mcpServers.map(toV2McpServer),
      ...(replay ? { replayFrom: { type: 'start' } } : {}),
    });
  return {
    version: 2,
    closed: connection.closed,
    close: (error) => connection.close(error),
    async initialize(clientInfo) {
      const response = await agent.request(methods.agent.initialize, {
        protocolVersion: 2,
        info: clientInfo,
        capabilities: {},
      });
      return fromV2Initialize(response);
    },
    async authenticate(methodId) {
      await agent.request(methods.agent.auth.login, { methodId });
    },
    async newSession(cwd, mcpServers) {
      const { sessionId } = await agent.request(methods.agent.session.new, {
        cwd,
        mcpServers: mcpServers.map(toV2McpServer),
      });
      return { sessionId };
    },
    async loadSession(sessionId, cwd, mcpServers) {
      await reopen(sessionId, cwd, mcpServers, true);
      return {};
    },
    async resumeSession(sessionId, cwd, mcpServers) {
      await reopen(sessionId, cwd, mcpServers, false);
      return {};
    },
    async closeSession(sessionId) {
      await agent.request(methods.agent.session.close, { sessionId });
    },
    async listSessions(cwd) {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await agent.request(methods.agent.session.list, { cwd, cursor });
        ids.push(...page.sessions.map((session) => session.sessionId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      return ids;
    },
    async setSessionMode() {
      // v2 has no session modes; nothing offers one, so nothing asks for one.
      throw RequestError.methodNotFound('session/set_mode');
    },
    async prompt(sessionId, prompt, onEnded) {
      // A prompt sent into a running turn (steering) joins it and ends with it.
      const joined = turns.get(sessionId);
      const turn = joined ?? runningTurn();
      if (!joined) turns.set(sessionId, turn);
      turn.onEnded.push(onEnded);
      try {
        await agent.request(methods.agent.session.prompt, { sessionId, prompt: prompt as ContentBlockV2[] });
      } catch (error) {
        if (!joined && turns.get(sessionId) === turn) turns.delete(sessionId);
        onEnded();
        throw error;
      }
      return turn.ended;
    },
    cancel: (sessionId) => agent.notify(methods.agent.session.cancel, { sessionId }),
    steer: (sessionId, prompt) => sendSteer(agent, sessionId, prompt),
  };
}
