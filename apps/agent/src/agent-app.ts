import {
  type AgentApp,
  type AgentContext,
  agent,
  type ContentBlock,
  type McpServer,
  methods,
  type PromptResponse,
  RequestError,
  type SessionModeState,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';
import { type AgentFeatures, agentCapabilities } from './features.js';
import type { Log } from './log.js';
import { type AgentScript, ScriptError, scriptFromPrompt } from './script.js';
import { playTurn, sendLateChunk } from './scripted-turn.js';
import type { HistoryEntry, SessionRecord } from './session-log.js';
import type { SessionStore } from './session-store.js';
import { AGENT_VERSION } from './version.js';

/** The extension request claude-agent-acp and codex-acp take a steer with (docs/adr/0040). */
const STEER_METHOD = '_session/steering';

/** A steer's parameters: the session and the prompt, as session/prompt has them. */
function parseSteer(params: unknown): { sessionId: string; prompt: ContentBlock[] } {
  const { sessionId, prompt } = (params ?? {}) as { sessionId?: unknown; prompt?: unknown };
  if (typeof sessionId !== 'string' || !Array.isArray(prompt)) {
    throw RequestError.invalidParams(undefined, 'a steer needs a sessionId and a prompt');
  }
  return { sessionId, prompt: prompt as ContentBlock[] };
}

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

/** A session this process serves (created, loaded or resumed here), with its running turn if any. */
interface LiveSession {
  record: SessionRecord;
  turn: AbortController | undefined;
  /** Prompts in the record's history, counted once when the session is attached, then kept. */
  turns: number;
  /** The last turn of this process on the session was cancelled (for `emptyAfterCancel`). */
  cancelled?: boolean;
  /** While a turn runs with `steering` on: the prompts steered into it so far. */
  steers?: ContentBlock[][];
}

function replayOf(entry: HistoryEntry): SessionUpdate[] {
  if (entry.role === 'agent') {
    return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: entry.text } }];
  }
  return entry.prompt.map((content) => ({ sessionUpdate: 'user_message_chunk', content }));
}

/** The one auth method the agent offers when `requireAuth` is on. */
const AUTH_METHOD = { id: 'tributary-test-login', name: 'Test login', description: 'Accepts any client.' };

/** The built-in agent: handlers are registered only for what `features` advertises. */
export function createAgentApp({ store, features, defaults, scripting, log }: AgentAppDeps): AgentApp {
  const live = new Map<string, LiveSession>();
  let authenticated = false;

  const liveSession = (sessionId: string): LiveSession => {
    const session = live.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  };
  const stored = async (sessionId: string): Promise<SessionRecord> => {
    const record = await store.read(sessionId);
    if (!record) throw RequestError.sessionNotFound(sessionId);
    return record;
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
  // Every opening (new, load, resume) records the MCP servers it came with, for tests to read back.
  const open = async (
    record: SessionRecord,
    mcpServers: McpServer[],
  ): Promise<{ modes?: SessionModeState }> => {
    const session = attach(record);
    const modes = modesOf(session.record);
    await store.update(session.record, {
      mcpServers,
      ...(modes.modes ? { modeId: modes.modes.currentModeId } : {}),
    });
    return modes;
  };

  const app = agent({ name: 'tributary-agent' })
    .onRequest(methods.agent.initialize, ({ params }) => {
      log('info', 'initialize', { clientInfo: params.clientInfo, protocolVersion: params.protocolVersion });
      if (features.refuseInitialize) throw new RequestError(-32022, 'Unsupported protocol version');
      return {
        protocolVersion: features.protocolVersion,
        agentCapabilities: agentCapabilities(features),
        ...(features.steering ? { _meta: { steering: { supported: true } } } : {}),
        agentInfo: { name: 'tributary-agent', title: 'Tributary built-in agent', version: AGENT_VERSION },
        authMethods: features.requireAuth ? [AUTH_METHOD] : [],
      };
    })
    .onRequest(methods.agent.authenticate, ({ params }) => {
      if (!features.requireAuth || params.methodId !== AUTH_METHOD.id) {
        throw RequestError.invalidParams(undefined, `unknown auth method "${params.methodId}"`);
      }
      authenticated = true;
      log('info', 'authenticate', { methodId: params.methodId });
      return {};
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      if (features.requireAuth && !authenticated) {
        throw RequestError.authRequired(undefined, `sign in with the "${AUTH_METHOD.id}" method first`);
      }
      const record = await store.create(params.cwd);
      const modes = await open(record, params.mcpServers);
      log('info', 'session/new', { sessionId: record.sessionId, mcpServers: params.mcpServers.length });
      return { sessionId: record.sessionId, ...modes };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      // When the prompt reached the agent, in epoch milliseconds with a fraction: what latency is measured to.
      log('info', 'session/prompt', {
        sessionId: params.sessionId,
        at: performance.timeOrigin + performance.now(),
      });
      const session = liveSession(params.sessionId);
      if (session.turn)
        throw RequestError.invalidRequest(undefined, 'a prompt is already running on this session');
      let script: AgentScript;
      try {
        script = { ...defaults, ...(scripting ? scriptFromPrompt(params.prompt) : {}) };
      } catch (error) {
        if (error instanceof ScriptError) throw RequestError.invalidParams(undefined, error.message);
        throw error;
      }
      return runPrompt(session, params.prompt, script, client);
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      log('info', 'session/cancel', { sessionId: params.sessionId });
      live.get(params.sessionId)?.turn?.abort();
    });

  async function runPrompt(
    session: LiveSession,
    prompt: ContentBlock[],
    script: AgentScript,
    client: AgentContext,
  ): Promise<PromptResponse> {
    const { record } = session;
    if (features.emptyAfterCancel && session.cancelled) {
      session.cancelled = false;
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
      session.turns++;
      await store.appendEntry(record, { role: 'user', prompt });
      const outcome = await playTurn({
        sessionId: record.sessionId,
        cwd: record.cwd,
        prompt,
        script,
        scripting,
        client,
        cancel: turn.signal,
        earlierTurns,
        modeId: record.modeId,
        mcpServers: record.mcpServers ?? [],
        steers,
        log,
      });
      // The turn is over for steering before its answer is written: a steer from now on is refused.
      session.steers = undefined;
      await store.appendEntry(record, { role: 'agent', text: outcome.text });
      session.cancelled = outcome.stopReason === 'cancelled';
      if (script.lateChunk !== undefined)
        sendLateChunk({ client, sessionId: record.sessionId, log }, script.lateChunk);
      return { stopReason: outcome.stopReason };
    } finally {
      session.turn = undefined;
      session.steers = undefined;
    }
  }

  if (features.loadSession) {
    app.onRequest(methods.agent.session.load, async ({ params, client }) => {
      const record = await stored(params.sessionId);
      // ACP: the whole conversation is replayed as notifications before the load is answered.
      for (const update of record.history.flatMap(replayOf)) {
        await client.notify(methods.client.session.update, { sessionId: record.sessionId, update });
      }
      const modes = await open(record, params.mcpServers);
      log('info', 'session/load', { sessionId: record.sessionId, entries: record.history.length });
      return modes;
    });
  }
  if (features.resume) {
    app.onRequest(methods.agent.session.resume, async ({ params }) => {
      if (features.exitOnResume) process.exit(5);
      const modes = await open(await stored(params.sessionId), params.mcpServers ?? []);
      log('info', 'session/resume', { sessionId: params.sessionId });
      return modes;
    });
  }
  if (features.modes.length > 0) {
    app.onRequest(methods.agent.session.setMode, async ({ params, client }) => {
      const session = liveSession(params.sessionId);
      if (!features.modes.includes(params.modeId)) {
        throw RequestError.invalidParams(undefined, `unknown session mode "${params.modeId}"`);
      }
      await store.update(session.record, { modeId: params.modeId });
      await client.notify(methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: 'current_mode_update', currentModeId: params.modeId },
      });
      log('info', 'session/set_mode', { sessionId: params.sessionId, modeId: params.modeId });
      return {};
    });
  }
  if (features.steering) {
    app.onRequest(STEER_METHOD, parseSteer, async ({ params }) => {
      const session = liveSession(params.sessionId);
      const steers = session.steers;
      // As claude-agent-acp with `idleBehavior: promptRequired`: no running turn, no new one either.
      if (!steers || session.turn?.signal.aborted) {
        log('info', 'steer refused: no running turn', { sessionId: params.sessionId });
        return { outcome: 'promptRequired' };
      }
      steers.push(params.prompt);
      log('info', 'session/steering', {
        sessionId: params.sessionId,
        blocks: params.prompt.length,
        at: performance.timeOrigin + performance.now(),
      });
      await store.appendEntry(session.record, { role: 'user', prompt: params.prompt, steered: true });
      return { outcome: 'injected' };
    });
  }
  if (features.close) {
    app.onRequest(methods.agent.session.close, async ({ params }) => {
      const session = liveSession(params.sessionId);
      session.turn?.abort();
      live.delete(params.sessionId);
      // An append: with a state directory shared across workers, another agent process may have
      // carried the session on since this one loaded it, and its turns stay in the file.
      await store.update(session.record, { closedAt: new Date().toISOString() });
      log('info', 'session/close', { sessionId: params.sessionId });
      return {};
    });
  }
  return app;
}
