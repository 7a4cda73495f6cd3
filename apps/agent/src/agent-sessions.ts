import {
  type ContentBlock,
  type McpServer,
  RequestError,
  type SessionModeState,
  type StopReason,
  type Stream,
} from '@agentclientprotocol/sdk';
import type { AgentFeatures } from './features.js';
import type { Log } from './log.js';
import { type AgentScript, ScriptError, scriptFromPrompt } from './script.js';
import { playTurn, sendLateChunk } from './scripted-turn.js';
import type { SessionRecord } from './session-log.js';
import type { SessionStore } from './session-store.js';
import type { TurnWire } from './turn-wire.js';

export interface AgentAppDeps {
  store: SessionStore;
  features: AgentFeatures;
  /** Script applied to every turn before the prompt's own `@agent` lines. */
  defaults: AgentScript;
  /**
   * Whether `@agent {json}` lines in a prompt script the turn. Off, they are text like any other: the
   * prompt's text comes from chat users, who must not make the agent exit, hang or report its env.
   */
  scripting: boolean;
  log: Log;
}

/** An agent of either protocol version, put on a connection. */
export interface ServedAgent {
  connect(stream: Stream): { closed: Promise<void> };
}

/** A session this process serves (created, loaded or resumed here), with its running turn if any. */
export interface LiveSession {
  record: SessionRecord;
  turn: AbortController | undefined;
  /** Prompts in the record's history, counted once when the session is attached, then kept. */
  turns: number;
  /** The last turn of this process on the session was cancelled (for `emptyAfterCancel`). */
  cancelled?: boolean;
  /** While a turn runs with `steering` on: the prompts steered into it so far. */
  steers?: ContentBlock[][];
  /** What the session's turns in this process have cost (USD), reported with each usage update. */
  cost?: number;
}

/** How a prompt ended: its stop reason and, where the script reports usage, the turn's tokens. */
export interface PromptEnding {
  stopReason: StopReason;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
}

/** The extension request claude-agent-acp and codex-acp take a steer with (docs/adr/0040). */
export const STEER_METHOD = '_session/steering';

/** A steer's parameters: the session and the prompt, as session/prompt has them. */
export function parseSteer(params: unknown): { sessionId: string; prompt: ContentBlock[] } {
  const { sessionId, prompt } = (params ?? {}) as { sessionId?: unknown; prompt?: unknown };
  if (typeof sessionId !== 'string' || !Array.isArray(prompt)) {
    throw RequestError.invalidParams(undefined, 'a steer needs a sessionId and a prompt');
  }
  return { sessionId, prompt: prompt as ContentBlock[] };
}

/** The one auth method the agent offers when `requireAuth` is on. */
export const AUTH_METHOD = {
  id: 'tributary-test-login',
  name: 'Test login',
  description: 'Accepts any client.',
};

export type AgentSessions = ReturnType<typeof agentSessions>;

/** What the agent does, whichever protocol version asks: sessions, sign-in and scripted turns. */
export function agentSessions({ store, features, defaults, scripting, log }: AgentAppDeps) {
  const live = new Map<string, LiveSession>();
  let authenticated = false;

  const liveSession = (sessionId: string): LiveSession => {
    const session = live.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  };
  // Loading or resuming a session this process already serves keeps its running turn.
  const attach = (record: SessionRecord): LiveSession => {
    const existing = live.get(record.sessionId);
    if (existing) return existing;
    const turns = record.history.filter((entry) => entry.role === 'user' && !entry.steered).length;
    const session: LiveSession = { record, turn: undefined, turns };
    live.set(record.sessionId, session);
    return session;
  };
  // The modes part of an answer that opens a session: absent when the agent offers none.
  const modesOf = (record: SessionRecord): { modes?: SessionModeState } => {
    if (features.modes.length === 0) return {};
    const currentModeId =
      record.modeId !== undefined && features.modes.includes(record.modeId)
        ? record.modeId
        : features.modes[0]!;
    return {
      modes: {
        currentModeId,
        availableModes: features.modes.map((id) => ({ id, name: `Mode ${id}` })),
      },
    };
  };

  return {
    liveSession,
    async stored(sessionId: string): Promise<SessionRecord> {
      const record = await store.read(sessionId);
      if (!record) throw RequestError.sessionNotFound(sessionId);
      return record;
    },
    /** Every opening (new, load, resume) records the MCP servers it came with, for tests to read back. */
    async open(record: SessionRecord, mcpServers: readonly object[]): Promise<{ modes?: SessionModeState }> {
      const session = attach(record);
      const modes = modesOf(session.record);
      await store.update(session.record, {
        mcpServers: mcpServers as McpServer[],
        ...(modes.modes ? { modeId: modes.modes.currentModeId } : {}),
      });
      return modes;
    },
    signIn(methodId: string): void {
      if (!features.requireAuth || methodId !== AUTH_METHOD.id) {
        throw RequestError.invalidParams(undefined, `unknown auth method "${methodId}"`);
      }
      authenticated = true;
      log('info', 'authenticate', { methodId });
    },
    requireSignIn(): void {
      if (features.requireAuth && !authenticated) {
        throw RequestError.authRequired(undefined, `sign in with the "${AUTH_METHOD.id}" method first`);
      }
    },
    /** The turn's script, or invalid params for a malformed one; a second prompt into a turn is refused. */
    accept(sessionId: string, prompt: ContentBlock[]): { session: LiveSession; script: AgentScript } {
      // When the prompt reached the agent, in epoch milliseconds with a fraction: what latency is measured to.
      log('info', 'session/prompt', { sessionId, at: performance.timeOrigin + performance.now() });
      const session = liveSession(sessionId);
      if (session.turn)
        throw RequestError.invalidRequest(undefined, 'a prompt is already running on this session');
      try {
        return { session, script: { ...defaults, ...(scripting ? scriptFromPrompt(prompt) : {}) } };
      } catch (error) {
        if (error instanceof ScriptError) throw RequestError.invalidParams(undefined, error.message);
        throw error;
      }
    },
    /**
     * Plays the turn. `announce` runs once the turn can be cancelled and before anything of it is sent:
     * v2 reports the prompt and the running state there.
     */
    async runPrompt(
      session: LiveSession,
      prompt: ContentBlock[],
      script: AgentScript,
      wire: TurnWire,
      announce: () => Promise<void> = async () => {},
    ): Promise<PromptEnding> {
      const { record } = session;
      if (features.emptyAfterCancel && session.cancelled) {
        session.cancelled = false;
        await announce();
        log('info', 'ending the prompt after a cancel at once, as scripted', { sessionId: record.sessionId });
        return { stopReason: 'end_turn' };
      }
      const earlierTurns = session.turns;
      // Registered before the first await: a session/cancel right behind the prompt must find the turn.
      const turn = new AbortController();
      session.turn = turn;
      const steers: ContentBlock[][] = [];
      if (features.steering) session.steers = steers;
      try {
        await announce();
        session.turns++;
        await store.appendEntry(record, { role: 'user', prompt });
        const outcome = await playTurn({
          sessionId: record.sessionId,
          cwd: record.cwd,
          prompt,
          script,
          scripting,
          wire,
          cancel: turn.signal,
          earlierTurns,
          costSoFar: session.cost ?? 0,
          modeId: record.modeId,
          mcpServers: record.mcpServers ?? [],
          closeSteering: () => {
            session.steers = undefined;
            return steers;
          },
          log,
        });
        await store.appendEntry(record, { role: 'agent', text: outcome.text });
        session.cancelled = outcome.stopReason === 'cancelled';
        if (script.lateChunk !== undefined)
          sendLateChunk({ wire, sessionId: record.sessionId, log }, script.lateChunk);
        if (!outcome.usage) return { stopReason: outcome.stopReason };
        const { cost, ...usage } = outcome.usage;
        session.cost = (session.cost ?? 0) + cost;
        return { stopReason: outcome.stopReason, usage };
      } finally {
        session.turn = undefined;
        session.steers = undefined;
      }
    },
    /** A prompt sent into the running turn (`_session/steering`); without one it is refused, as claude-agent-acp does. */
    async steer(
      sessionId: string,
      prompt: ContentBlock[],
    ): Promise<{ outcome: 'injected' | 'promptRequired' }> {
      const session = liveSession(sessionId);
      const { steers } = session;
      // As claude-agent-acp with `idleBehavior: promptRequired`: no running turn, no new one either.
      if (!steers || session.turn?.signal.aborted) {
        log('info', 'steer refused: no running turn', { sessionId });
        return { outcome: 'promptRequired' };
      }
      if (features.steerUnanswered) {
        log('info', 'session/steering left unanswered, as scripted', { sessionId });
        return new Promise<never>(() => {});
      }
      steers.push(prompt);
      log('info', 'session/steering', {
        sessionId,
        blocks: prompt.length,
        at: performance.timeOrigin + performance.now(),
      });
      await store.appendEntry(session.record, { role: 'user', prompt, steered: true });
      return { outcome: 'injected' };
    },
    cancel(sessionId: string): void {
      log('info', 'session/cancel', { sessionId });
      live.get(sessionId)?.turn?.abort();
    },
    async close(sessionId: string): Promise<void> {
      const session = liveSession(sessionId);
      session.turn?.abort();
      live.delete(sessionId);
      // An append: with a state directory shared across workers, another agent process may have
      // carried the session on since this one loaded it, and its turns stay in the file.
      await store.update(session.record, { closedAt: new Date().toISOString() });
      log('info', 'session/close', { sessionId });
    },
  };
}
