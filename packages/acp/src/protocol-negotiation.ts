import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import { UnsupportedProtocolVersionError } from './errors.js';
import {
  isSupportedVersion,
  NEWEST_PROTOCOL_VERSION,
  type ProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol.js';

// The code of the SDK's RequestError.unsupportedProtocolVersion, which it exports no constant for.
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
const NEGOTIATION_ID = 'tributary-initialize';

interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** The agent's answer to `initialize`, untouched: the chosen version's SDK reads it. */
export type InitializeAnswer = { result: unknown } | { error: JsonRpcError };

export interface Negotiated {
  version: ProtocolVersion;
  /**
   * The connection from here on. The SDK client put on it opens with an `initialize` of its own, which
   * never reaches the agent: it is answered with the agent's answer to ours.
   */
  stream: Stream;
}

export interface ClientDescription {
  info: { name: string; version: string };
}

function answerTo(message: AnyMessage): InitializeAnswer | undefined {
  if (!('id' in message) || message.id !== NEGOTIATION_ID || 'method' in message) return undefined;
  return 'error' in message ? { error: message.error as JsonRpcError } : { result: message.result };
}

/**
 * Sends `initialize` offering the newest version we speak and reads the agent's answer: ACP has the
 * agent answer the newest version it speaks at or below the one offered, so an agent of either version
 * answers it. Each SDK speaks one version only, so the answer is read here, before either is chosen.
 */
export async function negotiate(raw: Stream, client: ClientDescription): Promise<Negotiated> {
  const writer = raw.writable.getWriter();
  const reader = raw.readable.getReader();
  await writer.write({
    jsonrpc: '2.0',
    id: NEGOTIATION_ID,
    method: 'initialize',
    // A v2 agent reads info and capabilities, a v1 agent clientInfo and clientCapabilities; each
    // ignores the other's fields. We use neither the file system nor terminals of either version.
    params: {
      protocolVersion: NEWEST_PROTOCOL_VERSION,
      info: client.info,
      capabilities: {},
      clientInfo: client.info,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    },
  });
  const early: AnyMessage[] = [];
  let answer: InitializeAnswer | undefined;
  while (!answer) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the agent closed its output before answering initialize');
    answer = answerTo(value);
    if (!answer) early.push(value);
  }
  const version = versionOf(answer);
  return { version, stream: handOver(reader, writer, early, answer) };
}

function versionOf(answer: InitializeAnswer): ProtocolVersion {
  if ('error' in answer) {
    if (answer.error.code === UNSUPPORTED_PROTOCOL_VERSION) {
      throw new UnsupportedProtocolVersionError(SUPPORTED_PROTOCOL_VERSIONS, undefined);
    }
    throw new Error(`initialize failed: ${answer.error.message} (code ${answer.error.code})`);
  }
  const { result } = answer;
  const version =
    typeof result === 'object' && result !== null && 'protocolVersion' in result
      ? result.protocolVersion
      : undefined;
  if (!isSupportedVersion(version)) {
    throw new UnsupportedProtocolVersionError(
      SUPPORTED_PROTOCOL_VERSIONS,
      typeof version === 'number' ? version : undefined,
    );
  }
  return version;
}

/** The rest of the connection, for the chosen SDK: what arrived before the answer comes first. */
function handOver(
  reader: ReadableStreamDefaultReader<AnyMessage>,
  writer: WritableStreamDefaultWriter<AnyMessage>,
  early: AnyMessage[],
  answer: InitializeAnswer,
): Stream {
  let inbound: ReadableStreamDefaultController<AnyMessage> | undefined;
  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      inbound = controller;
      for (const message of early) controller.enqueue(message);
    },
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      if ('method' in message && message.method === 'initialize' && 'id' in message) {
        inbound?.enqueue({ jsonrpc: '2.0', id: message.id, ...answer } as AnyMessage);
        return;
      }
      return writer.write(message);
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable, writable };
}
