import { agent, methods, RequestError, type SessionUpdate } from '@agentclientprotocol/sdk';
import { createAgentAppV2 } from './agent-app-v2.js';
import {
  type AgentAppDeps,
  type AgentSessions,
  AUTH_METHOD,
  agentSessions,
  parseSteer,
  type ServedAgent,
  STEER_METHOD,
} from './agent-sessions.js';
import { agentCapabilities } from './features.js';
import type { HistoryEntry } from './session-log.js';
import { v1Wire } from './turn-wire.js';
import { AGENT_VERSION } from './version.js';

export type { AgentAppDeps } from './agent-sessions.js';

function replayOf(entry: HistoryEntry): SessionUpdate[] {
  if (entry.role === 'agent') {
    return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: entry.text } }];
  }
  return entry.prompt.map((content) => ({ sessionUpdate: 'user_message_chunk', content }));
}

/** The built-in agent, speaking ACP v2 when `features.protocolVersion` is 2 and v1 otherwise. */
export function createAgentApp(deps: AgentAppDeps): ServedAgent {
  const sessions = agentSessions(deps);
  return deps.features.protocolVersion === 2
    ? createAgentAppV2(sessions, deps)
    : createAgentAppV1(sessions, deps);
}

/** v1: handlers are registered only for what `features` advertises; a prompt is answered when its turn ends. */
function createAgentAppV1(sessions: AgentSessions, { store, features, log }: AgentAppDeps): ServedAgent {
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
      sessions.signIn(params.methodId);
      return {};
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      sessions.requireSignIn();
      const record = await store.create(params.cwd);
      const modes = await sessions.open(record, params.mcpServers);
      log('info', 'session/new', { sessionId: record.sessionId, mcpServers: params.mcpServers.length });
      return { sessionId: record.sessionId, ...modes };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const { session, script } = sessions.accept(params.sessionId, params.prompt);
      // `usage` is unstable ACP: the stable answer type has no field for it, the wire carries it.
      return sessions.runPrompt(session, params.prompt, script, v1Wire(client));
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => sessions.cancel(params.sessionId));

  if (features.loadSession) {
    app.onRequest(methods.agent.session.load, async ({ params, client }) => {
      const record = await sessions.stored(params.sessionId);
      // ACP: the whole conversation is replayed as notifications before the load is answered.
      for (const update of record.history.flatMap(replayOf)) {
        await client.notify(methods.client.session.update, { sessionId: record.sessionId, update });
      }
      const modes = await sessions.open(record, params.mcpServers);
      log('info', 'session/load', { sessionId: record.sessionId, entries: record.history.length });
      return modes;
    });
  }
  if (features.resume) {
    app.onRequest(methods.agent.session.resume, async ({ params }) => {
      if (features.exitOnResume) process.exit(5);
      const modes = await sessions.open(await sessions.stored(params.sessionId), params.mcpServers ?? []);
      log('info', 'session/resume', { sessionId: params.sessionId });
      return modes;
    });
  }
  if (features.modes.length > 0) {
    app.onRequest(methods.agent.session.setMode, async ({ params, client }) => {
      const session = sessions.liveSession(params.sessionId);
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
    app.onRequest(STEER_METHOD, parseSteer, ({ params }) => sessions.steer(params.sessionId, params.prompt));
  }
  if (features.close) {
    app.onRequest(methods.agent.session.close, async ({ params }) => {
      await sessions.close(params.sessionId);
      return {};
    });
  }
  return app;
}
