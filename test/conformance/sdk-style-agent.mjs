// A conformance agent for end-to-end tests: it stands in for the ACP SDK's example agent, which the
// `@agentclientprotocol/sdk` package does not ship as a runnable file. Plain JavaScript on the SDK's
// agent side only, with no knowledge of how the broker packs prompts: it counts the content blocks it
// gets, asks permission for one tool call, and honours `session/cancel`.
//
// Each prompt turn:
//   1. streams "Received N content block(s), T of them text."
//   2. announces a tool call (`tool_call`, pending) and waits a little, as if preparing it;
//   3. asks `session/request_permission` with allow_once / allow_always / reject_once;
//   4. streams "Permission: selected <optionId>." (or "Permission: cancelled."),
//      finishes the tool call (completed, or failed when refused) and works a little longer;
//   5. answers `end_turn`, or `cancelled` as soon as `session/cancel` arrives.
//
// CONFORMANCE_AGENT_WORK_MS sets each of the two pauses (default 300 ms). With CONFORMANCE_AGENT_RECORD
// set to a file path, each prompt's content blocks are appended to it as one JSON line.
import { randomUUID } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import { agent, methods, ndJsonStream, RequestError } from '@agentclientprotocol/sdk';

const workMs = Number(process.env.CONFORMANCE_AGENT_WORK_MS || 300);
const recordFile = process.env.CONFORMANCE_AGENT_RECORD;

/** Session id -> the running turn's AbortController, or undefined between turns. */
const sessions = new Map();

/** Resolves after `ms`, or early when `signal` aborts; says whether the pause ran its course. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const app = agent({ name: 'sdk-style-conformance-agent' })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: 1,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: 'sdk-style-conformance-agent', version: '1.0.0' },
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, () => {
    const sessionId = randomUUID();
    sessions.set(sessionId, undefined);
    return { sessionId };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    if (!sessions.has(params.sessionId)) throw RequestError.sessionNotFound(params.sessionId);
    if (sessions.get(params.sessionId)) {
      throw RequestError.invalidRequest(undefined, 'a prompt is already running on this session');
    }
    const turn = new AbortController();
    sessions.set(params.sessionId, turn);
    const { sessionId } = params;
    const update = (u) => client.notify(methods.client.session.update, { sessionId, update: u });
    const say = (text) => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
    try {
      if (recordFile) await appendFile(recordFile, `${JSON.stringify(params.prompt)}\n`);
      const blocks = params.prompt.length;
      const texts = params.prompt.filter((block) => block.type === 'text').length;
      await say(`Received ${blocks} content block(s), ${texts} of them text.\n`);

      const toolCallId = `call-${randomUUID()}`;
      const toolCall = { toolCallId, title: 'Modifying a file', kind: 'edit', status: 'pending' };
      await update({ sessionUpdate: 'tool_call', ...toolCall });
      if (!(await pause(workMs, turn.signal))) return { stopReason: 'cancelled' };

      const answer = client.request(methods.client.session.requestPermission, {
        sessionId,
        toolCall,
        options: [
          { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
          { optionId: 'allow-always', name: 'Allow always', kind: 'allow_always' },
          { optionId: 'reject-once', name: 'Reject', kind: 'reject_once' },
        ],
      });
      // ACP: after session/cancel the client answers pending permission requests with `cancelled`.
      const { outcome } = await answer;
      if (outcome.outcome !== 'selected') {
        await say('Permission: cancelled.\n');
        return { stopReason: 'cancelled' };
      }
      await say(`Permission: selected ${outcome.optionId}.\n`);
      const granted = outcome.optionId !== 'reject-once';
      await update({
        sessionUpdate: 'tool_call_update',
        toolCallId,
        status: granted ? 'completed' : 'failed',
      });
      if (!(await pause(workMs, turn.signal))) return { stopReason: 'cancelled' };
      await say('Done.');
      return { stopReason: 'end_turn' };
    } finally {
      sessions.set(params.sessionId, undefined);
    }
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.abort();
  });

const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
// The client closing our stdin ends the conversation.
await connection.closed;
process.exit(0);
