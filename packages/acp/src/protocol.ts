import type {
  ContentBlock,
  McpServer,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionModeState,
} from '@agentclientprotocol/sdk';
import type { AgentInfo } from './agent-info.js';
import type { SteerOutcome } from './steering.js';
import type { TurnEvent } from './turn-events.js';
import type { PromptEnd } from './turn-usage.js';

/** The ACP versions this client speaks; `initialize` offers the newest, the agent picks. */
export const SUPPORTED_PROTOCOL_VERSIONS = [1, 2] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
export const NEWEST_PROTOCOL_VERSION: ProtocolVersion = 2;

export function isSupportedVersion(version: unknown): version is ProtocolVersion {
  return SUPPORTED_PROTOCOL_VERSIONS.some((supported) => supported === version);
}

/**
 * What the agent sends unasked, already in the one shape the rest of the package reads, whichever
 * version carried it: session updates as TurnEvents, permission requests as v1 requests.
 */
export interface AgentTraffic {
  onUpdate(sessionId: string, event: TurnEvent): void;
  onPermissionRequest(
    request: RequestPermissionRequest,
  ): RequestPermissionResponse | Promise<RequestPermissionResponse>;
}

/** What an agent answered when a session opened: the modes it offers, when it offers any. */
export interface SessionSetup {
  modes?: SessionModeState | null;
}

/**
 * One ACP version's wire: the names its requests go by and how its answers read. Everything above it
 * (process, pool, turns) is the same for every version; this is the only place they differ.
 */
export interface AgentProtocol {
  readonly version: ProtocolVersion;
  /** Resolves once the connection has ended and every message read was dispatched. */
  readonly closed: Promise<void>;
  close(error: unknown): void;
  /** The SDK's validated `initialize` exchange (the agent answered it during negotiation). */
  initialize(clientInfo: { name: string; version: string }): Promise<AgentInfo>;
  authenticate(methodId: string): Promise<void>;
  newSession(cwd: string, mcpServers: readonly McpServer[]): Promise<{ sessionId: string } & SessionSetup>;
  /** Reopens a stored session and has the agent replay its history (v1 load, v2 resume from the start). */
  loadSession(sessionId: string, cwd: string, mcpServers: readonly McpServer[]): Promise<SessionSetup>;
  resumeSession(sessionId: string, cwd: string, mcpServers: readonly McpServer[]): Promise<SessionSetup>;
  closeSession(sessionId: string): Promise<void>;
  listSessions(cwd: string): Promise<string[]>;
  setSessionMode(sessionId: string, modeId: string): Promise<void>;
  /**
   * Sends one prompt and resolves when its turn has ended, with the stop reason and the usage the agent
   * reported with it. `onEnded` runs in the
   * same reaction that ends the turn, before any later update of the session is handed on, so the
   * caller can stop attributing updates to the turn. Nothing here holds other requests back while the
   * turn runs: a second prompt may be sent into it.
   */
  prompt(sessionId: string, prompt: ContentBlock[], onEnded: () => void): Promise<PromptEnd>;
  cancel(sessionId: string): Promise<void>;
  /** Sends a prompt into the running turn (steering.ts); only for an agent that advertises it. */
  steer(sessionId: string, prompt: ContentBlock[]): Promise<SteerOutcome>;
}
