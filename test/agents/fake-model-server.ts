/**
 * A fake model API on 127.0.0.1 for running the published coding agents offline (docs/agents.md,
 * "Measured"): the three wire formats they speak, streamed, with every request logged.
 *
 *   Anthropic Messages      POST /v1/messages                         claude-agent-acp (ANTHROPIC_BASE_URL)
 *   OpenAI Responses        POST /v1/responses                        codex-acp (a `model_providers` entry)
 *   Gemini                  POST /v1beta/models/<m>:streamGenerateContent, :generateContent, :countTokens
 *                                                                     gemini-cli (GOOGLE_GEMINI_BASE_URL)
 *
 * What the model answers is decided by the newest user text of the request:
 *   - a tool result in it: "TOOL-RESULT: <the tool's output>";
 *   - `RUN-SHELL: <command>`: a call of the agent's shell tool with that command, by the name and
 *     argument shape of the shell tool the request declares (an answer of status 400 when it declares
 *     none, so a test sees the agent changed its tools rather than a turn without a command);
 *   - `RUN-ESCALATED: <command>`: the same, asking codex to run it outside its sandboxes (an approval);
 *   - `SLOW`: twenty words, one every `slowWordMs`, so a turn can be cancelled or a worker killed mid-way;
 *   - anything else: "Hello from the fake model." in three chunks.
 * Not a manual test: it is run by test/agents/measure.ts, or alone for trying an agent by hand:
 *   npx tsx test/agents/fake-model-server.ts [--port N]
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export type ModelApi = 'anthropic' | 'openai' | 'gemini';

/** One request as the server saw it. */
export interface ModelRequest {
  api: ModelApi | 'other';
  method: string;
  path: string;
  /** When the request line arrived, and when the first byte of the answer left (epoch ms). */
  at: number;
  firstByteAt?: number;
  /** When the answer ended: written whole, or its connection closed by the agent (epoch ms). */
  endedAt?: number;
  /** The agent closed the connection before the answer was whole (a cancel, a killed process). */
  abandoned?: boolean;
  /** The API key the agent sent (x-api-key, a bearer token or x-goog-api-key). */
  credential?: string;
  /** An `Upgrade` header: a WebSocket attempt. */
  upgrade?: string;
  streamed: boolean;
  /** Every user text of the conversation, oldest first (tool results excluded). */
  userTexts: string[];
  /** The newest tool result's output, when the request carries one. */
  toolResult?: string;
  /** The answer: `text:` or `tool:` and what. */
  answer: string;
  /** The request body as sent, for reading by hand. */
  body: unknown;
}

export interface FakeModelServer {
  url: string;
  requests: ModelRequest[];
  close(): Promise<void>;
}

export interface FakeModelOptions {
  port?: number;
  slowWordMs?: number;
  onRequest?: (request: ModelRequest) => void;
}

type TextAnswer = { kind: 'text'; words: string[]; delayMs: number };
type Answer = TextAnswer | { kind: 'shell'; command: string; escalated: boolean };

/** A call of the agent's shell tool: its name and arguments as the agent's API carries them. */
interface ShellCall {
  kind: 'call';
  name: string;
  input: Record<string, unknown>;
}

/** What a streamed answer carries: text, or the shell tool's call resolved against the request. */
type Streamed = TextAnswer | ShellCall;

const HELLO = ['Hello ', 'from the ', 'fake model.'];

function decide(newestUser: string | undefined, toolResult: string | undefined, slowWordMs: number): Answer {
  if (toolResult !== undefined) return { kind: 'text', words: [`TOOL-RESULT: ${toolResult}`], delayMs: 0 };
  const shell = /RUN-(SHELL|ESCALATED): (.+)/.exec(newestUser ?? '');
  if (shell) return { kind: 'shell', command: shell[2]!.trim(), escalated: shell[1] === 'ESCALATED' };
  if (newestUser?.includes('SLOW')) {
    return {
      kind: 'text',
      words: Array.from({ length: 20 }, (_, i) => `word${i + 1} `),
      delayMs: slowWordMs,
    };
  }
  return { kind: 'text', words: HELLO, delayMs: 0 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// biome-ignore lint/suspicious/noExplicitAny: request bodies of three foreign APIs, read loosely
type Json = any;

/** Text of an Anthropic or OpenAI content field: a string or a list of blocks. */
function texts(content: Json, kinds: string[]): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.filter((b: Json) => kinds.includes(b?.type)).map((b: Json) => String(b.text ?? ''));
}

function outputText(output: Json): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((b: Json) => b?.text ?? b?.content ?? '').join('');
  return JSON.stringify(output);
}

/** The user texts and newest tool result of a request, per API. */
function readConversation(api: ModelApi, body: Json): { userTexts: string[]; toolResult?: string } {
  const userTexts: string[] = [];
  let toolResult: string | undefined;
  if (api === 'anthropic') {
    for (const message of body.messages ?? []) {
      if (message.role !== 'user') continue;
      const blocks = Array.isArray(message.content) ? message.content : [];
      const result = blocks.filter((b: Json) => b?.type === 'tool_result').at(-1);
      toolResult = result ? outputText(result.content) : undefined;
      userTexts.push(...texts(message.content, ['text']));
    }
  } else if (api === 'openai') {
    for (const item of Array.isArray(body.input) ? body.input : []) {
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
        toolResult = outputText(item.output);
      } else if (item.role === 'user') {
        userTexts.push(...texts(item.content, ['input_text']));
        toolResult = undefined;
      }
    }
  } else {
    for (const content of body.contents ?? []) {
      if (content.role !== 'user') continue;
      const parts: Json[] = content.parts ?? [];
      const response = parts.find((p) => p.functionResponse)?.functionResponse.response;
      toolResult =
        response === undefined
          ? undefined
          : typeof response.output === 'string'
            ? response.output
            : JSON.stringify(response);
      for (const part of parts) if (typeof part.text === 'string') userTexts.push(part.text);
    }
  }
  return { userTexts, ...(toolResult === undefined ? {} : { toolResult }) };
}

function sse(res: ServerResponse, event: string | undefined, data: unknown): void {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
}

async function streamAnthropic(res: ServerResponse, answer: Streamed, model: string): Promise<void> {
  const usage = {
    input_tokens: 10,
    output_tokens: 1,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const id = `msg_${Date.now()}`;
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  if (answer.kind === 'call') {
    sse(res, 'content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: `toolu_${Date.now()}`, name: answer.name, input: {} },
    });
    sse(res, 'content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(answer.input) },
    });
  } else {
    sse(res, 'content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    for (const word of answer.words) {
      if (answer.delayMs) await sleep(answer.delayMs);
      sse(res, 'content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: word },
      });
    }
  }
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: answer.kind === 'call' ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  sse(res, 'message_stop', { type: 'message_stop' });
}

/** The names a tool list declares: Anthropic's and OpenAI's `name`, Gemini's function declarations. */
function declaredTools(tools: Json[]): Set<string> {
  return new Set(
    tools.flatMap((t) => [t?.name, ...(t?.functionDeclarations ?? []).map((d: Json) => d?.name)]),
  );
}

/**
 * The call of the shell tool the request declares, in that tool's argument shape: Claude Code's
 * `Bash`, codex's `exec_command` (or the older `shell_command`, `shell`), Gemini CLI's
 * `run_shell_command`. Undefined when it declares none of them.
 */
function shellCall(api: ModelApi, tools: Json[], command: string, escalated: boolean): ShellCall | undefined {
  const names = declaredTools(tools);
  if (api === 'anthropic') {
    return names.has('Bash')
      ? { kind: 'call', name: 'Bash', input: { command, description: 'Run the requested command' } }
      : undefined;
  }
  if (api === 'gemini') {
    return names.has('run_shell_command')
      ? { kind: 'call', name: 'run_shell_command', input: { command } }
      : undefined;
  }
  const escalation = escalated
    ? { sandbox_permissions: 'require_escalated', justification: 'The user asked for this command.' }
    : {};
  if (names.has('exec_command')) {
    return { kind: 'call', name: 'exec_command', input: { cmd: command, ...escalation } };
  }
  if (names.has('shell_command')) {
    return { kind: 'call', name: 'shell_command', input: { command, ...escalation } };
  }
  if (names.has('shell')) {
    return { kind: 'call', name: 'shell', input: { command: ['bash', '-lc', command], ...escalation } };
  }
  return undefined;
}

async function streamOpenai(res: ServerResponse, answer: Streamed): Promise<void> {
  const id = `resp_${Date.now()}`;
  sse(res, 'response.created', { type: 'response.created', response: { id } });
  let item: Json;
  if (answer.kind === 'call') {
    item = {
      type: 'function_call',
      id: `fc_${Date.now()}`,
      call_id: `call_${Date.now()}`,
      name: answer.name,
      arguments: JSON.stringify(answer.input),
    };
    sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item });
  } else {
    const itemId = `msg_${Date.now()}`;
    sse(res, 'response.output_item.added', {
      type: 'response.output_item.added',
      output_index: 0,
      item: { type: 'message', id: itemId, role: 'assistant', status: 'in_progress', content: [] },
    });
    for (const word of answer.words) {
      if (answer.delayMs) await sleep(answer.delayMs);
      sse(res, 'response.output_text.delta', {
        type: 'response.output_text.delta',
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        delta: word,
      });
    }
    item = {
      type: 'message',
      id: itemId,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: answer.words.join(''), annotations: [] }],
    };
  }
  sse(res, 'response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  sse(res, 'response.completed', {
    type: 'response.completed',
    response: {
      id,
      usage: {
        input_tokens: 10,
        input_tokens_details: null,
        output_tokens: 5,
        output_tokens_details: null,
        total_tokens: 15,
      },
    },
  });
}

const geminiUsage = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

async function streamGemini(res: ServerResponse, answer: Streamed): Promise<void> {
  const chunk = (parts: Json[], last: boolean) =>
    res.write(
      `data: ${JSON.stringify({
        candidates: [
          { content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) },
        ],
        ...(last ? { usageMetadata: geminiUsage } : {}),
      })}\r\n\r\n`,
    );
  if (answer.kind === 'call') {
    chunk([{ functionCall: { name: answer.name, args: answer.input } }], true);
    return;
  }
  for (const [i, word] of answer.words.entries()) {
    if (answer.delayMs) await sleep(answer.delayMs);
    chunk([{ text: word }], i === answer.words.length - 1);
  }
}

function apiOf(path: string): ModelApi | 'other' {
  if (/\/messages(\?|$)/.test(path)) return 'anthropic';
  if (/\/responses(\?|$)/.test(path)) return 'openai';
  if (/\/models\/[^/]+:/.test(path)) return 'gemini';
  return 'other';
}

function credentialOf(req: IncomingMessage): { credential?: string } {
  const header = req.headers['x-api-key'] ?? req.headers['x-goog-api-key'] ?? req.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  return value ? { credential: value.replace(/^Bearer /i, '') } : {};
}

async function readBody(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  options: FakeModelOptions,
  log: ModelRequest[],
): Promise<void> {
  const at = Date.now();
  const path = req.url ?? '/';
  const api = apiOf(path);
  const body = (await readBody(req)) ?? {};
  const record: ModelRequest = {
    api,
    method: req.method ?? 'GET',
    path,
    at,
    ...credentialOf(req),
    ...(req.headers.upgrade ? { upgrade: req.headers.upgrade } : {}),
    streamed: false,
    userTexts: [],
    answer: 'none',
    body,
  };
  log.push(record);
  res.once('close', () => {
    record.endedAt = Date.now();
    if (!res.writableFinished) record.abandoned = true;
  });
  const firstByte = () => {
    record.firstByteAt ??= Date.now();
  };
  if (api === 'other' || req.method !== 'POST' || req.headers.upgrade) {
    record.answer = 'status:404';
    firstByte();
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: 'not here' } }));
    options.onRequest?.(record);
    return;
  }
  const conversation = readConversation(api, body);
  record.userTexts = conversation.userTexts;
  if (conversation.toolResult !== undefined) record.toolResult = conversation.toolResult;
  const answer = decide(conversation.userTexts.at(-1), conversation.toolResult, options.slowWordMs ?? 1000);
  const side = sideAnswer(api, path, body, answer);
  const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
  const call =
    !side && answer.kind === 'shell' ? shellCall(api, tools, answer.command, answer.escalated) : undefined;
  record.answer =
    answer.kind === 'text'
      ? `text: ${answer.words.join('')}`
      : side || call
        ? `tool: ${answer.command}`
        : `status:400 no shell tool among the declared ones (${[...declaredTools(tools)].join(', ')})`;
  options.onRequest?.(record);
  firstByte();

  if (side) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(side));
    return;
  }
  const streamed: Streamed | undefined = answer.kind === 'text' ? answer : call;
  if (!streamed) {
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: record.answer } }));
    return;
  }
  record.streamed = true;
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  if (api === 'anthropic') await streamAnthropic(res, streamed, String(body.model));
  else if (api === 'openai') await streamOpenai(res, streamed);
  else await streamGemini(res, streamed);
  res.end();
}

/**
 * The whole JSON answer to a request that is not the turn's stream: Gemini CLI's token counts and side
 * questions, and Claude Code's requests without `stream`.
 */
function sideAnswer(api: ModelApi, path: string, body: Json, answer: Answer): Json | undefined {
  const text = answer.kind === 'text' ? answer.words.join('') : undefined;
  if (api === 'gemini' && path.includes(':countTokens')) return { totalTokens: 10 };
  if (api === 'gemini' && path.includes(':generateContent')) {
    // Gemini CLI's side questions (next speaker, model routing) ask for JSON.
    const json = body.generationConfig?.responseMimeType === 'application/json';
    return {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              {
                text: json
                  ? JSON.stringify({ reasoning: 'fake', next_speaker: 'user', model_choice: 'flash' })
                  : (text ?? ''),
              },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: geminiUsage,
    };
  }
  if (api === 'anthropic' && body.stream !== true) {
    return {
      id: `msg_${Date.now()}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [{ type: 'text', text: text ?? 'ok' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
  }
  return undefined;
}

export async function startFakeModelServer(options: FakeModelOptions = {}): Promise<FakeModelServer> {
  const requests: ModelRequest[] = [];
  const server: Server = createServer((req, res) => {
    handle(req, res, options, requests).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy(error);
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
  const server = await startFakeModelServer({
    port: Number(values.port),
    onRequest: (r) =>
      process.stdout.write(
        `${JSON.stringify({ at: r.at, api: r.api, path: r.path, upgrade: r.upgrade, answer: r.answer })}\n`,
      ),
  });
  process.stdout.write(`fake model server on ${server.url}\n`);
}
