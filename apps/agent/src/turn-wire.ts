import {
  type AgentContext,
  methods,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';

/**
 * What a scripted turn says to the client, in v1 terms. Each protocol version puts it on its wire:
 * v1 as it is, v2 translated (turn-wire-v2.ts).
 */
export interface TurnWire {
  update(sessionId: string, update: SessionUpdate): Promise<void>;
  requestPermission(request: RequestPermissionRequest): Promise<RequestPermissionResponse>;
}

export function v1Wire(client: AgentContext): TurnWire {
  return {
    update: (sessionId, update) => client.notify(methods.client.session.update, { sessionId, update }),
    requestPermission: (request) => client.request(methods.client.session.requestPermission, request),
  };
}
