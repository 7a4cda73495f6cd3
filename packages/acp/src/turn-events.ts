import type {
  ContentBlock,
  Cost,
  PlanEntry,
  RequestPermissionOutcome,
  RequestPermissionRequest,
  SessionUpdate,
  ToolCall,
  ToolCallUpdate,
} from '@agentclientprotocol/sdk';

/** A session/update (or a permission decision) as the caller of a turn sees it. */
export type TurnEvent =
  | { kind: 'agent_message_chunk'; content: ContentBlock }
  | { kind: 'agent_thought_chunk'; content: ContentBlock }
  | { kind: 'tool_call'; toolCall: ToolCall }
  | { kind: 'tool_call_update'; toolCallUpdate: ToolCallUpdate }
  | { kind: 'plan'; entries: PlanEntry[] }
  | { kind: 'usage'; used: number; size: number; cost: Cost | undefined }
  | { kind: 'permission'; request: RequestPermissionRequest; outcome: RequestPermissionOutcome }
  /** Anything else the agent reports, as its version wrote it. */
  | { kind: 'other'; update: { sessionUpdate: string } };

export function toTurnEvent(update: SessionUpdate): TurnEvent {
  switch (update.sessionUpdate) {
    case 'agent_message_chunk':
      return { kind: 'agent_message_chunk', content: update.content };
    case 'agent_thought_chunk':
      return { kind: 'agent_thought_chunk', content: update.content };
    case 'tool_call':
      return { kind: 'tool_call', toolCall: update };
    case 'tool_call_update':
      return { kind: 'tool_call_update', toolCallUpdate: update };
    case 'plan':
      return { kind: 'plan', entries: update.entries };
    case 'usage_update':
      return { kind: 'usage', used: update.used, size: update.size, cost: update.cost ?? undefined };
    default:
      return { kind: 'other', update };
  }
}
