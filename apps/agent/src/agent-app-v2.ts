import { randomUUID } from 'node:crypto';
import type { ContentBlock } from '@agentclientprotocol/sdk';
import {
  type AgentContext,
  agent,
  type ContentBlock as ContentBlockV2,
  methods,
  RequestError,
  type SessionUpdate,
  type StateUpdate,
} from '@agentclientprotocol/sdk/experimental/v2';
import type { AgentAppDeps, AgentSessions, ServedAgent } from './agent-sessions.js';
import { AUTH_METHOD, parseSteer, STEER_METHOD } from './agent-sessions.js';
import type { HistoryEntry } from './session-log.js';
import { sendState, v2Wire } from './turn-wire-v2.js';
import { AGENT_VERSION } from './version.js';

/** A stored conversation as v2 replays it: each entry a whole message with an id of its own. */
function replayOf(entry: HistoryEntry, index: number): SessionUpdate {
  return entry.role === 'agent'
    ? {
        sessionUpdate: 'agent_message',
        messageId: `replay-${index}`,
        content: [{ type: 'text', text: entry.text }],
      }
    : {
        sessionUpdate: 'user_message',
        messageId: `replay-${index}`,
        content: entry.prompt as ContentBlockV2[],
      };
}

/**
 * v2: the session methods are all there (new, list, resume, close); a prompt is answered once it is
 * accepted, and its turn is reported by `user_message` and `state_update` notifications.
 */
export function createAgentAppV2(
  sessions: AgentSessions,
  { store, features, log }: AgentAppDeps,
): ServedAgent {
  const notify = (client: AgentContext, sessionId: string, update: SessionUpdate) =>
    client.notify(methods.client.session.update, { sessionId, update });
  const app = agent({ name: 'tributary-agent' })
    .onRequest(methods.agent.initialize, ({ params }) => {
      log('info', 'initialize', { clientInfo: params.info, protocolVersion: params.protocolVersion });
      if (features.refuseInitialize) throw new RequestError(-32022, 'Unsupported protocol version');
      const supported = (on: boolean) => (on ? {} : null);
      return {
        protocolVersion: 2,
        ...(features.steering ? { _meta: { steering: { supported: true } } } : {}),
        info: { name: 'tributary-agent', title: 'Tributary built-in agent', version: AGENT_VERSION },
        capabilities: {
          session: {
            prompt: {
              image: supported(features.image),
              audio: supported(features.audio),
              embeddedContext: supported(features.embeddedContext),
            },
            mcp: { stdio: {}, http: {} },
          },
        },
        authMethods: features.requireAuth
          ? [
              {
                type: 'agent',
                methodId: AUTH_METHOD.id,
                name: AUTH_METHOD.name,
                description: AUTH_METHOD.description,
              },
            ]
          : [],
      };
    })
    .onRequest(methods.agent.auth.login, ({ params }) => {
      sessions.signIn(params.methodId);
      return {};
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      sessions.requireSignIn();
      const record = await store.create(params.cwd);
      await sessions.open(record, params.mcpServers ?? []);
      log('info', 'session/new', { sessionId: record.sessionId, mcpServers: params.mcpServers?.length ?? 0 });
      return { sessionId: record.sessionId };
    })
    .onRequest(methods.agent.session.list, async ({ params }) => {
      const records = await store.list(params.cwd ?? undefined);
      return { sessions: records.map(({ sessionId, cwd }) => ({ sessionId, cwd })) };
    })
    .onRequest(methods.agent.session.resume, async ({ params, client }) => {
      if (features.exitOnResume) process.exit(5);
      const record = await sessions.stored(params.sessionId);
      if (params.replayFrom) {
        for (const [index, entry] of record.history.entries()) {
          await notify(client, record.sessionId, replayOf(entry, index));
        }
      }
      await sessions.open(record, params.mcpServers ?? []);
      // v2: the current state follows any replay and precedes the answer.
      const running = sessions.liveSession(record.sessionId).turn !== undefined;
      await sendState(client, record.sessionId, running ? { state: 'running' } : { state: 'idle' });
      log('info', 'session/resume', { sessionId: params.sessionId, replay: params.replayFrom != null });
      return {};
    })
    .onRequest(methods.agent.session.close, async ({ params }) => {
      await sessions.close(params.sessionId);
      return {};
    })
    .onRequest(methods.agent.session.prompt, ({ params, client }) => {
      const prompt = params.prompt as ContentBlock[];
      const { session, script } = sessions.accept(params.sessionId, prompt);
      const { sessionId } = params;
      const messageId = randomUUID();
      const announce = async () => {
        await notify(client, sessionId, { sessionUpdate: 'user_message', messageId, content: params.prompt });
        await sendState(client, sessionId, { state: 'running' });
      };
      // The answer goes out now; the turn plays on and its end is the idle state.
      void sessions
        .runPrompt(session, prompt, script, v2Wire(client, messageId), announce)
        .then(
          (ending) => sendState(client, sessionId, { state: 'idle', ...ending } as StateUpdate),
          (error: unknown) => {
            const { code = -32603, message = String(error) } = error as Partial<RequestError>;
            return sendState(client, sessionId, {
              state: 'idle',
              stopReason: 'error',
              error: { code, message },
            });
          },
        )
        .catch((error: unknown) => log('warn', 'turn end not sent', { error: String(error) }));
      return { messageId };
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => sessions.cancel(params.sessionId));
  if (features.steering) {
    app.onRequest(STEER_METHOD, parseSteer, ({ params }) => sessions.steer(params.sessionId, params.prompt));
  }
  return app;
}
