import type { SessionUpdate } from '@agentclientprotocol/sdk';
import {
  type AgentContext,
  methods,
  type SessionUpdate as SessionUpdateV2,
  type StateUpdate,
  type ToolCallContent,
} from '@agentclientprotocol/sdk/experimental/v2';
import type { TurnWire } from './turn-wire.js';

/**
 * The v1 updates a scripted turn sends, as v2 says them: chunks belong to a message id, tool calls are
 * upserts, a plan is a plan_update. `turn` names the ids, so each turn's reply is a message of its own.
 */
export function v2Wire(client: AgentContext, turn: string): TurnWire {
  const send = (sessionId: string, update: SessionUpdateV2): Promise<void> =>
    client.notify(methods.client.session.update, { sessionId, update });
  return {
    update(sessionId, update) {
      const translated = toV2(update, turn);
      return translated ? send(sessionId, translated) : Promise.resolve();
    },
    async requestPermission({ sessionId, toolCall, options }) {
      // v2 permission requests name a tool call the client already knows: announce it first.
      await send(sessionId, {
        sessionUpdate: 'tool_call_update',
        toolCallId: toolCall.toolCallId,
        title: toolCall.title ?? null,
        kind: toolCall.kind ?? null,
        status: 'pending',
      });
      const { outcome } = await client.request(methods.client.session.requestPermission, {
        sessionId,
        title: toolCall.title ?? toolCall.toolCallId,
        subject: {
          type: 'tool_call',
          toolCall: { toolCallId: toolCall.toolCallId, kind: toolCall.kind ?? null },
        },
        options,
      });
      // Outcomes beyond v1's two (future ones) are read as a cancel: nothing was chosen.
      return outcome.outcome === 'selected' && 'optionId' in outcome
        ? { outcome: { outcome: 'selected', optionId: outcome.optionId as string } }
        : { outcome: { outcome: 'cancelled' } };
    },
  };
}

/** Reports the session's foreground state (`state_update`). */
export function sendState(client: AgentContext, sessionId: string, state: StateUpdate): Promise<void> {
  return client.notify(methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: 'state_update', ...state } as SessionUpdateV2,
  });
}

function toV2(update: SessionUpdate, turn: string): SessionUpdateV2 | undefined {
  switch (update.sessionUpdate) {
    case 'agent_message_chunk':
      return { sessionUpdate: 'agent_message_chunk', messageId: `agent-${turn}`, content: update.content };
    case 'agent_thought_chunk':
      return { sessionUpdate: 'agent_thought_chunk', messageId: `thought-${turn}`, content: update.content };
    case 'tool_call':
    case 'tool_call_update':
      return {
        sessionUpdate: 'tool_call_update',
        toolCallId: update.toolCallId,
        ...(update.title ? { title: update.title } : {}),
        ...(update.kind ? { kind: update.kind } : {}),
        ...(update.status ? { status: update.status } : {}),
        ...(update.content ? { content: update.content as ToolCallContent[] } : {}),
      };
    case 'plan':
      return {
        sessionUpdate: 'plan_update',
        plan: { type: 'items', planId: `plan-${turn}`, entries: update.entries },
      };
    case 'usage_update':
      return {
        sessionUpdate: 'usage_update',
        used: update.used,
        size: update.size,
        ...(update.cost ? { cost: update.cost } : {}),
      };
    default:
      // Nothing else a scripted turn sends has a v2 counterpart it needs.
      return undefined;
  }
}
