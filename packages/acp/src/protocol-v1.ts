import {
  client,
  type InitializeResponse,
  methods,
  type StopReason,
  type Stream,
} from '@agentclientprotocol/sdk';
import { fromV1Initialize } from './agent-info.js';
import type { AgentProtocol, AgentTraffic } from './protocol.js';
import { sendSteer } from './steering.js';
import { toTurnEvent } from './turn-events.js';
import { promptEnd } from './turn-usage.js';

/** ACP v1: a prompt's answer ends its turn, and `session/load` replays a stored session. */
export function speakV1(stream: Stream, traffic: AgentTraffic): AgentProtocol {
  // session/update is registered first so that an update is handed over before a prompt response
  // read after it resolves the prompt.
  const app = client({ name: 'tributary' })
    .onNotification(methods.client.session.update, ({ params }) =>
      traffic.onUpdate(params.sessionId, toTurnEvent(params.update)),
    )
    .onRequest(methods.client.session.requestPermission, ({ params }) => traffic.onPermissionRequest(params));
  const connection = app.connect(stream);
  const agent = connection.agent;
  return {
    version: 1,
    closed: connection.closed,
    close: (error) => connection.close(error),
    async initialize(clientInfo) {
      const response: InitializeResponse = await agent.request(methods.agent.initialize, {
        protocolVersion: 1,
        clientInfo,
      });
      return fromV1Initialize(response);
    },
    async authenticate(methodId) {
      await agent.request(methods.agent.authenticate, { methodId });
    },
    newSession: (cwd, mcpServers) =>
      agent.request(methods.agent.session.new, { cwd, mcpServers: [...mcpServers] }),
    async loadSession(sessionId, cwd, mcpServers) {
      const answer = await agent.request(methods.agent.session.load, {
        sessionId,
        cwd,
        mcpServers: [...mcpServers],
      });
      return { modes: answer?.modes };
    },
    async resumeSession(sessionId, cwd, mcpServers) {
      const answer = await agent.request(methods.agent.session.resume, {
        sessionId,
        cwd,
        mcpServers: [...mcpServers],
      });
      return { modes: answer?.modes };
    },
    async closeSession(sessionId) {
      await agent.request(methods.agent.session.close, { sessionId });
    },
    async listSessions(cwd) {
      const { sessions } = await agent.request(methods.agent.session.list, { cwd });
      return sessions.map((session) => session.sessionId);
    },
    async setSessionMode(sessionId, modeId) {
      await agent.request(methods.agent.session.setMode, { sessionId, modeId });
    },
    async prompt(sessionId, prompt, onEnded) {
      const answer = agent.request(methods.agent.session.prompt, { sessionId, prompt });
      // The first reaction to the answer: it runs before the SDK dispatches any update read after it.
      answer.then(onEnded, onEnded);
      // The SDK's stable types omit `usage` (unstable), but the answer arrives unparsed, with it.
      const { stopReason, usage } = (await answer) as { stopReason: StopReason; usage?: unknown };
      return promptEnd(stopReason, usage);
    },
    cancel: (sessionId) => agent.notify(methods.agent.session.cancel, { sessionId }),
    steer: (sessionId, prompt) => sendSteer(agent, sessionId, prompt),
  };
}
